// The package's TypeScript declarations, compiled with `tsc --noEmit --strict`.
import { getLoadablePath, load, ExtensionLoader } from "sqlite-agentmem";

const path: string = getLoadablePath();
const db: ExtensionLoader = { loadExtension: (p: string) => p };
load(db);
// @ts-expect-error a number is not a database
load(42);
export { path };
