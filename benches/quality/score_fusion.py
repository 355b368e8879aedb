"""What fusing by scores instead of by ranks would give: on a dialogue data set (dialogue.py's
shape), R@5 of a convex mix of `mem_search`'s score (divided by the question's best) and the
MiniLM cosine (min-max scaled over the conversation), for a range of dense shares. A probe
for the next step of `mem_recall_hybrid`, which fuses by reciprocal rank; its figures are in
benches/results/hybrid-2026-11-28.md.

    score_fusion.py target/quality/realtalk.json [--ext dist/agentmem0]
"""

import argparse
import json

import numpy as np

import dialogue
from minilm import MiniLM

SHARES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
POOL = 100  # BM25 hits scored per question; the rest count 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--ext", default=dialogue.DEFAULT_EXT)
    args = ap.parse_args()
    with open(args.data) as f:
        data = json.load(f)
    encoder = MiniLM()
    recall = {a: [] for a in SHARES}
    for conv_json in data:
        conv = dialogue.Conversation(conv_json, False)
        engine = dialogue.Agentmem(conv, args.ext)
        turns = dialogue.cached_vectors(encoder, [t[3] for t in conv.turns])
        questions = dialogue.cached_vectors(encoder, [q["question"] for q, _ in conv.questions])
        for qi, (q, gold) in enumerate(conv.questions):
            opts = json.dumps({"limit": POOL, "now": engine.now})
            rows = engine.conn.execute("SELECT message_id, score FROM mem_search(?, ?)",
                                       (q["question"], opts)).fetchall()
            bm25 = np.zeros(len(conv.turns))
            if rows:
                scores = np.array([r[1] for r in rows])
                bm25[[int(r[0][1:]) for r in rows]] = scores / scores.max()
            cos = turns @ questions[qi]
            cos = (cos - cos.min()) / (cos.max() - cos.min() + 1e-9)
            for a in SHARES:
                top = np.argsort(-((1 - a) * bm25 + a * cos), kind="stable")[:5]
                recall[a].append(len(gold.intersection(top.tolist())) / len(gold))
    print("| dense share | R@5 |")
    print("|---:|---:|")
    for a in SHARES:
        print("| %.1f | %.3f |" % (a, np.mean(recall[a])))


if __name__ == "__main__":
    main()
