"""The public names of docs/python-api.md resolve to what they promise, however the package was imported."""

import subprocess
import sys


def test_public_names_after_submodule_imports():
    code = (
        "import gacc_hf.data.synthetic, gacc_hf.data.schema, gacc_hf.run.benchmark, gacc_hf.metric, gacc_hf\n"
        "assert gacc_hf.synthetic(seed=0, contexts=2).num_rows == 6\n"
        "assert gacc_hf.load_sample('public').num_rows >= 24\n"
        "assert callable(gacc_hf.run_benchmark) and gacc_hf.METRIC_PATH.endswith('gacc.py')\n"
        "assert gacc_hf.token_budget(100, 0.29) == 29 and gacc_hf.get_codec().identity_verified\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
