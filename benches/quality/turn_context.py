"""Whether a turn's neighbours should lift it: on a dialogue data set (dialogue.py's shape),
R@5 of `mem_recall_hybrid`'s score fusion (the call's lists and scales, the default weights'
dense share of two thirds) when each candidate also gets a share `beta` of the better fused
score of the turns just before and after it in the same session. In a chat the answer can be
the reply to the turn the question's words match.

Two ways: `lists`, where a neighbour counts only if it is in the call's lists itself, and
`widened`, where the neighbours of the listed turns join the candidates (scored by their
cosine and, if listed, their BM25). BM25 alone with the same lift is reported beside them, since
a lift that helps BM25 as much would belong in `mem_search`, not in the fusion. The share is
also chosen on five chats and reported on the other five, both ways.

    turn_context.py target/quality/realtalk.json [--ext dist/agentmem0] [--speaker-prefix]
"""

import argparse
import json

import numpy as np

import dialogue
from minilm import MiniLM
from score_fusion import cross_validated, mean, recall5

BETAS = (0.0, 0.1, 0.2, 0.3, 0.5)
DENSE_SHARE = 2 / 3  # mem_recall_hybrid's default weights: BM25 0.25, dense 0.5
N_BM25, N_DENSE = 20, 30
WAYS = ("BM25 alone", "lists", "widened")


def lifted(base, sessions, beta):
    """Each candidate's score plus beta times its better same-session neighbour's."""
    out = {}
    for k, s in base.items():
        near = [base.get(j, 0.0) for j in (k - 1, k + 1)
                if 0 <= j < len(sessions) and sessions[j] == sessions[k]]
        out[k] = s + beta * max(near, default=0.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--ext", default=dialogue.DEFAULT_EXT)
    ap.add_argument("--speaker-prefix", action="store_true",
                    help="store and embed turns as 'speaker: text' (as dialogue.py's option)")
    args = ap.parse_args()
    with open(args.data) as f:
        data = json.load(f)
    encoder = MiniLM()
    # R@5 per way, lift and chat (for the folds)
    r5 = {w: {b: [[] for _ in data] for b in BETAS} for w in WAYS}
    for ci, conv_json in enumerate(data):
        conv = dialogue.Conversation(conv_json, args.speaker_prefix)
        engine = dialogue.Agentmem(conv, args.ext)
        turns = dialogue.cached_vectors(encoder, [t[3] for t in conv.turns])
        questions = dialogue.cached_vectors(encoder, [q["question"] for q, _ in conv.questions])
        sessions = [t[0] for t in conv.turns]
        for qi, (q, gold) in enumerate(conv.questions):
            opts = json.dumps({"limit": N_BM25, "now": engine.now})
            rows = engine.conn.execute("SELECT message_id, score FROM mem_search(?, ?)",
                                       (q["question"], opts)).fetchall()
            bm25 = {int(r[0][1:]): r[1] / rows[0][1] for r in rows}
            cos = np.clip(turns @ questions[qi], 0, 1)
            dense = np.argsort(-cos, kind="stable")[:N_DENSE].tolist()
            fused = lambda k: (1 - DENSE_SHARE) * bm25.get(k, 0.0) + DENSE_SHARE * cos[k]
            listed = {k: fused(k) for k in dict.fromkeys(list(bm25) + dense)}
            near = {j for k in listed for j in (k - 1, k + 1)
                    if 0 <= j < len(sessions) and sessions[j] == sessions[k]}
            bases = {"BM25 alone": dict(bm25), "lists": listed,
                     "widened": {**{j: fused(j) for j in near}, **listed}}
            for w, base in bases.items():
                for b in BETAS:
                    scores = lifted(base, sessions, b)
                    keys = list(scores)
                    r5[w][b][ci].append(
                        recall5(np.array([scores[k] for k in keys]), keys, gold) if keys else 0.0)
    print("| way | %s | cross-validated (lifts chosen) |" % " | ".join("lift %.1f" % b for b in BETAS))
    print("|---|%s---:|" % ("---:|" * len(BETAS)))
    for w in WAYS:
        tested, picks = cross_validated(r5[w])
        print("| %s | %s | %.3f (%s) |" % (
            w, " | ".join("%.3f" % mean(r5[w][b]) for b in BETAS), tested, ", ".join(picks)))


if __name__ == "__main__":
    main()
