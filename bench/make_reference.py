"""Build the reference model's .tflite that ships in the package (nnlite_tui/core/bench/reference.tflite).

    python bench/make_reference.py [--check]

Converts nnlite_tui/core/bench/reference_model.py:make with nnlite's own converter (channels-last
input, validated against PyTorch) and writes the file with its sha256; `--check` converts again and
prints whether the result is byte-identical to the shipped file. Rebuild only on purpose: the
reference's figures are comparable across runs only while its bytes stay the same.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nnlite_tui.core.bench import reference  # noqa: E402
from nnlite_tui.core.convert.converter import Converter  # noqa: E402
from nnlite_tui.core.convert.options import ConvertOptions  # noqa: E402
from nnlite_tui.core.sources.discover import discover  # noqa: E402


def build(out: Path) -> dict:
    source = REPO / "nnlite_tui" / "core" / "bench" / "reference_model.py"
    (spec,) = discover([f"{source}:make"])
    with tempfile.TemporaryDirectory() as tmp, Converter(ConvertOptions(use_cache=False, workers=1)) as converter:
        result = converter.convert(spec, Path(tmp) / "reference.tflite")
        if not result.get("ok"):
            raise SystemExit(f"the reference model did not convert: {result.get('stage')}: {result.get('error_message')}")
        shutil.copyfile(result["artifact_path"], out)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="convert again and compare with the shipped file")
    args = ap.parse_args()
    target = reference.REFERENCE_FILE
    out = Path(tempfile.mkdtemp()) / "reference.tflite" if args.check else target
    result = build(out)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    print(f"{out}: {out.stat().st_size} bytes, sha256 {digest}, max abs diff vs PyTorch {result['max_abs_diff']:.3g}")
    if args.check:
        same = out.read_bytes() == target.read_bytes()
        print("identical to the shipped file" if same else f"differs from the shipped file (sha256 {reference.REFERENCE_SHA256})")
        return 0 if same else 1
    print(f"set REFERENCE_SHA256 = \"{digest}\" in nnlite_tui/core/bench/reference.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
