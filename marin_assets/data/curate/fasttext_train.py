"""Train a fastText model in a fresh interpreter: python -m marin_assets.data.curate.fasttext_train PARAMS_JSON.

Why a subprocess: with fasttext-numpy2-wheel 0.9.2, training inside a process that imported numpy,
pyspark or jax first can hit NaN or give different bytes for the same seed (it depends on the heap
state the process is in). A fresh process that imports only fasttext trains reproducibly. Only the
standard library and fasttext are imported here, on purpose.
"""

import json
import sys


def main() -> None:
    params = json.loads(sys.argv[1])
    out = params.pop("output")
    import fasttext

    fasttext.train_supervised(**params).save_model(out)


if __name__ == "__main__":
    main()
