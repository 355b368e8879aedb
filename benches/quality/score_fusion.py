"""What fusing by scores instead of by ranks would give: on a dialogue data set (dialogue.py's
shape), R@5 of a convex mix of `mem_search`'s score (divided by the question's best) and the
MiniLM cosine, for a range of dense shares: the curve behind `mem_recall_hybrid`'s score fusion
(whose share is its dense weight over the sum of its two weights), computed outside the
database; its figures are in benches/results/hybrid-2026-11-28-score.md.

Two settings: every turn scored (cosine min-max scaled over the chat), and only what the call
has — the BM25 list and the dense list of `--lists` lengths, raw cosine, a missing BM25 score
counting 0 — where the share is also chosen on half of the chats and reported on the other
half, both ways (two-fold cross-validation), since a share picked on the questions it is
reported on flatters it.

    score_fusion.py target/quality/realtalk.json [--ext dist/agentmem0] [--lists 20,30]
                    [--speaker-prefix]
"""

import argparse
import json

import numpy as np

import dialogue
from minilm import MiniLM

SHARES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
POOL = 100  # BM25 hits scored per question when every turn is scored; the rest count 0


def recall5(scores, keys, gold):
    top = np.argsort(-scores, kind="stable")[:5]
    return len(gold.intersection(keys[i] for i in top)) / len(gold)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--ext", default=dialogue.DEFAULT_EXT)
    ap.add_argument("--lists", default="20,30", help="BM25 and dense list lengths")
    ap.add_argument("--speaker-prefix", action="store_true",
                    help="store and embed turns as 'speaker: text' (as dialogue.py's option)")
    args = ap.parse_args()
    n_bm25, n_dense = (int(x) for x in args.lists.split(","))
    with open(args.data) as f:
        data = json.load(f)
    encoder = MiniLM()
    every = {a: [] for a in SHARES}
    lists = {a: [[] for _ in data] for a in SHARES}  # per chat, for the folds
    for ci, conv_json in enumerate(data):
        conv = dialogue.Conversation(conv_json, args.speaker_prefix)
        engine = dialogue.Agentmem(conv, args.ext)
        turns = dialogue.cached_vectors(encoder, [t[3] for t in conv.turns])
        questions = dialogue.cached_vectors(encoder, [q["question"] for q, _ in conv.questions])
        all_keys = list(range(len(conv.turns)))
        for qi, (q, gold) in enumerate(conv.questions):
            opts = json.dumps({"limit": POOL, "now": engine.now})
            rows = engine.conn.execute("SELECT message_id, score FROM mem_search(?, ?)",
                                       (q["question"], opts)).fetchall()
            bm25 = {int(r[0][1:]): r[1] for r in rows}
            best = max(bm25.values(), default=1.0)
            cos = turns @ questions[qi]
            scaled = (cos - cos.min()) / (cos.max() - cos.min() + 1e-9)
            every_bm25 = np.zeros(len(conv.turns))
            every_bm25[list(bm25)] = [s / best for s in bm25.values()]
            listed = [k for k, _ in sorted(bm25.items(), key=lambda kv: -kv[1])[:n_bm25]]
            dense = np.argsort(-cos, kind="stable")[:n_dense].tolist()
            keys = list(dict.fromkeys(listed + dense))
            part_bm25 = np.array([bm25[k] / best if k in listed else 0.0 for k in keys])
            part_cos = cos[keys]
            for a in SHARES:
                every[a].append(recall5((1 - a) * every_bm25 + a * scaled, all_keys, gold))
                lists[a][ci].append(recall5((1 - a) * part_bm25 + a * part_cos, keys, gold))
    print("| dense share | R@5, every turn scored | R@5, the call's lists (%d, %d) |" % (n_bm25, n_dense))
    print("|---:|---:|---:|")
    for a in SHARES:
        print("| %.1f | %.3f | %.3f |" % (a, np.mean(every[a]), np.mean(sum(lists[a], []))))
    half = len(data) // 2
    folds = (list(range(half)), list(range(half, len(data))))
    tested = []
    for train, test in (folds, folds[::-1]):
        pick = max(SHARES, key=lambda a: np.mean(sum((lists[a][i] for i in train), [])))
        tested += sum((lists[pick][i] for i in test), [])
        print("share %.1f chosen on chats %s" % (pick, train))
    print("cross-validated R@5 with the call's lists: %.3f" % np.mean(tested))


if __name__ == "__main__":
    main()
