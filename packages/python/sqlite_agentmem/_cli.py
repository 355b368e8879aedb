"""The `agentmem` command pip puts on the PATH: it runs the binary the wheel carries (the
command line and the MCP server; `agentmem --help`)."""

import os
import sys


def main() -> None:
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "agentmem")
    os.execv(binary, [binary, *sys.argv[1:]])
