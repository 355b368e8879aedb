"""REALTALK (danny911kr/REALTALK on GitHub: ten real chats between two people over 16–21
days) converted to the dialogue JSON shape dialogue.py reads (README.md). The repository
carries no licence: the data is read from a local checkout and the output stays in target/,
never committed. Only `data/Chat_*.json` is read — `data/locomo/` holds the held-out
benchmark and is never opened.

    realtalk.py CHECKOUT_DIR [--out target/quality/realtalk.json]

CHECKOUT_DIR is a work tree, or a bare git directory (read with `git show HEAD:…`).
"""

import argparse
import datetime
import glob
import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHAT = re.compile(r"^data/Chat_\d+_[^/]+\.json$")


def chats(checkout):
    """(name, parsed JSON) of every chat file in the checkout's `data/`, in name order."""
    if os.path.isdir(os.path.join(checkout, "data")):
        paths = sorted(glob.glob(os.path.join(checkout, "data", "Chat_*.json")))
        for p in paths:
            with open(p) as f:
                yield os.path.basename(p), json.load(f)
        return
    names = subprocess.run(["git", "--git-dir", checkout, "ls-tree", "-r", "--name-only", "HEAD", "data/"],
                           check=True, capture_output=True, text=True).stdout.split()
    for name in sorted(n for n in names if CHAT.match(n)):
        text = subprocess.run(["git", "--git-dir", checkout, "show", "HEAD:" + name],
                              check=True, capture_output=True, text=True).stdout
        yield os.path.basename(name), json.loads(text)


def iso(stamp):
    """'29.12.2023, 22:42:04' → ISO 8601 (None when it does not parse)."""
    try:
        return datetime.datetime.strptime(stamp.strip(), "%d.%m.%Y, %H:%M:%S").isoformat()
    except (AttributeError, ValueError):
        return None


def convert(name, chat):
    sessions = []
    n = 1
    while "session_%d" % n in chat:
        turns = [{"id": t["dia_id"], "speaker": t["speaker"], "text": t.get("clean_text") or "",
                  "timestamp": iso(t.get("date_time"))}
                 for t in chat["session_%d" % n] if t.get("dia_id")]
        sessions.append({"id": "session_%d" % n, "date": iso(chat.get("session_%d_date_time" % n)),
                         "turns": turns})
        n += 1
    questions = [{"id": "%s:%d" % (name, i), "question": q["question"], "evidence": q.get("evidence", []),
                  "category_name": "category %s" % q.get("category")}
                 for i, q in enumerate(chat.get("qa", []))]
    return {"id": name.rsplit(".", 1)[0], "speakers": list(chat["name"].values()), "sessions": sessions,
            "questions": questions}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("--out", default=os.path.join(REPO, "target", "quality", "realtalk.json"))
    args = ap.parse_args()
    data = [convert(name, chat) for name, chat in chats(args.checkout)]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(data, f)
    turns = sum(len(s["turns"]) for c in data for s in c["sessions"])
    print("%d conversations, %d turns, %d questions -> %s"
          % (len(data), turns, sum(len(c["questions"]) for c in data), args.out))


if __name__ == "__main__":
    main()
