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

Then, in the second setting, how each list's scores are put on the 0–1 scale (`NORMS`): BM25
divided by its best (the call's) or min-max over its list, its square root or square; cosine
raw (the call's), divided by the dense list's best, min-max over that list, or squared. Each
pair gets its best R@5 over the shares and its cross-validated R@5. Before them, the band the
raw cosines of a dense list sit in: the median question's first and last cosine, and its last
divided by its first (where dividing by the best puts the list's end).

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


NORMS_BM25 = {
    "best": lambda s, listed: s / listed.max(),
    "minmax": lambda s, listed: (s - listed.min()) / (listed.max() - listed.min() + 1e-9),
    "sqrt": lambda s, listed: np.sqrt(s / listed.max()),
    "square": lambda s, listed: (s / listed.max()) ** 2,
}
NORMS_DENSE = {
    "raw": lambda c, listed: np.clip(c, 0, 1),
    "best": lambda c, listed: np.clip(c / listed.max(), 0, 1),
    "minmax": lambda c, listed: np.clip((c - listed.min()) / (listed.max() - listed.min() + 1e-9), 0, 1),
    "square": lambda c, listed: np.clip(c, 0, 1) ** 2,
}
NORMS = [(b, d) for b in NORMS_BM25 for d in NORMS_DENSE]
CALLS = ("best", "raw")  # what mem_recall_hybrid computes


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
    # R@5 per normalisation, share and chat (for the folds), on the call's lists
    lists = {n: {a: [[] for _ in data] for a in SHARES} for n in NORMS}
    band = []  # (first, last) cosine of each question's dense list
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
            band.append((cos[dense[0]], cos[dense[-1]]))
            keys = list(dict.fromkeys(listed + dense))
            for a in SHARES:
                every[a].append(recall5((1 - a) * every_bm25 + a * scaled, all_keys, gold))
            if not listed:
                for n in NORMS:
                    for a in SHARES:
                        lists[n][a][ci].append(recall5(cos[keys], keys, gold))
                continue
            in_list = np.array([bm25[k] for k in listed])
            raw_bm25 = np.array([bm25[k] if k in listed else np.nan for k in keys])
            for b, d in NORMS:
                part_bm25 = np.nan_to_num(NORMS_BM25[b](raw_bm25, in_list), nan=0.0)
                part_cos = NORMS_DENSE[d](cos[keys], cos[dense])
                for a in SHARES:
                    mix = (1 - a) * part_bm25 + a * part_cos
                    lists[(b, d)][a][ci].append(recall5(mix, keys, gold))
    print("| dense share | R@5, every turn scored | R@5, the call's lists (%d, %d) |" % (n_bm25, n_dense))
    print("|---:|---:|---:|")
    for a in SHARES:
        print("| %.1f | %.3f | %.3f |" % (a, np.mean(every[a]), mean(lists[CALLS][a])))
    first, last = np.array(band).T
    print("\nThe dense lists' raw cosines, median over the questions: first %.3f, last %.3f, "
          "last / first %.3f." % (np.median(first), np.median(last), np.median(last / first)))
    print("\n| BM25 scale | cosine scale | best R@5 (share) | cross-validated R@5 (shares chosen) |")
    print("|---|---|---:|---:|")
    for n in NORMS:
        top = max(SHARES, key=lambda a: mean(lists[n][a]))
        tested, picks = cross_validated(lists[n])
        mark = "**" if n == CALLS else ""
        print("| %s%s%s | %s | %.3f (%.1f) | %.3f (%s) |" % (
            mark, n[0], mark, n[1], mean(lists[n][top]), top, tested, ", ".join(picks)))


def cross_validated(by_choice):
    """Two-fold cross-validation over the chats: from `by_choice` (a setting -> R@5 per chat),
    the setting with the best mean on the first half reported on the second, and the other way;
    the mean R@5 of the two reports and the settings chosen."""
    n_chats = len(next(iter(by_choice.values())))
    half = n_chats // 2
    folds = (list(range(half)), list(range(half, n_chats)))
    tested, picks = [], []
    for train, test in (folds, folds[::-1]):
        pick = max(by_choice, key=lambda c: mean(by_choice[c], train))
        picks.append("%.1f" % pick)
        tested += sum((by_choice[pick][i] for i in test), [])
    return np.mean(tested), picks


def mean(per_chat, chats=None):
    """The mean over the questions of the chats (all of them by default)."""
    chats = range(len(per_chat)) if chats is None else chats
    return np.mean(sum((per_chat[i] for i in chats), []))


if __name__ == "__main__":
    main()
