"""Model discovery against the committed LEMUR tree (tests/fixtures/lemur) and against sample_models.

Expected values were read from the tree's files (stat/train/*/<epoch>.json and transform/*.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nnlite_tui.core.sources import discover as sources, lemur
from nnlite_tui.core.sources.lemur_transform import apply_transform, parse_transform
from nnlite_tui.core.sources.discover import SourceError
from nnlite_tui.core.sources.discover import discover
from tests.conftest import LEMUR_TREE

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_models"

GA128, GA56, FRACTAL = "ga-128", "ga-56", "FractalNet-309422bb05fad9e6f97b0291b8f0dcb0"
RL_INIT = "rl-init-120a973b453fdc4026c341ad195c8a4b"
ALT_DICT_HP = "alt-b35b729b68749c6662739af3a0b6f3e4"  # supported_hyperparameters() returns a dict
ALT_C100 = "alt-b55e4ee0c3b6600da30bf0bec6d1c0f8"
NO_TRIALS = "ast-layer_type-AlexNet-882df354d4992dd127c8a22f8c9421e7"
OTHERS = ("ga-mut-1011", "alt-nn1-45fb6b67282370e8dd1601a4216846e8", "rag-2c1a7d9cd805e1a17f10def36f0fc449")
ALL = (GA128, GA56, FRACTAL, RL_INIT, ALT_DICT_HP, ALT_C100, NO_TRIALS, *OTHERS)


@pytest.fixture
def tree() -> Path:
    """The committed tree, for tests that only read it."""
    return LEMUR_TREE


@pytest.fixture
def own_tree(lemur_tree) -> Path:
    """A copy, for tests that add files to the tree."""
    return lemur_tree


def by_name(specs):
    return {s.name: s for s in specs}


def test_tree_root_is_detected_and_every_model_found(tree):
    specs = discover([str(tree)])
    assert [s.name for s in specs] == sorted(ALL)
    assert all(s.kind == "lemur" and Path(s.file).parent == tree / "ab" / "nn" / "nn" for s in specs)
    assert all(len(s.sha256) == 64 for s in specs)


def test_dataset_then_most_common_size_then_best_accuracy(tree):
    s = by_name(discover([str(tree)]))[GA128]
    # cifar-10 ranks first among ga-128's datasets; its trials used 32x32 most, and the best of those is
    # norm_flip uid 5e05326b..., accuracy 0.6843 after 5 epochs (5.json).
    assert (s.task, s.dataset, s.transform) == ("img-classification", "cifar-10", "norm_flip")
    assert s.in_shape == (1, 3, 32, 32) and s.out_shape == (10,)
    # the larger sizes its cifar-10 trials also used, for a retry on "output size too small"
    assert s.alt_in_shapes == ((1, 3, 64, 64), (1, 3, 128, 128), (1, 3, 256, 256), (1, 3, 299, 299))
    assert s.prm == {
        "batch": 4, "dropout": 0.14766258799565024, "lr": 0.007156970559769167,
        "momentum": 0.643812857605922, "transform": "norm_flip",
    }
    assert "5e05326b45939e663d0384aed2e15ed1" in s.origin and "epoch 5" in s.origin


def test_dataset_option_restricts_trials(tree):
    (s,) = discover([str(tree)], dataset="mnist", include=[GA128])
    # ga-128's mnist trials used 512x512 most; the best there is norm_512 uid 5959eb31..., accuracy
    # 0.991 after 5 epochs (5.json): Resize(512), CenterCrop(512), 1 channel.
    assert (s.dataset, s.transform, s.in_shape, s.out_shape) == ("mnist", "norm_512", (1, 1, 512, 512), (10,))
    assert s.prm["dropout"] == 0.3320014577160769 and s.prm["lr"] == 0.02397780533107967
    assert "5959eb317e68e9d3574071cbcf5db838" in s.origin and "epoch 5" in s.origin
    (fallback,) = discover([str(tree)], dataset="places365", include=[GA56])
    assert "no places365 trials" in fallback.origin and fallback.in_shape == (1, 3, 32, 32)


def test_size_from_the_trials_not_the_smallest_one(tree):
    s = by_name(discover([str(tree)]))[GA56]
    # ga-56 also ran at 28x28 (mnist, norm) once, but its cifar-10 trials used 299x299 most.
    assert (s.dataset, s.transform, s.in_shape, s.out_shape) == ("cifar-10", "norm_299_flip", (1, 3, 299, 299), (10,))
    assert s.prm["lr"] == 0.13428770380323557 and s.alt_in_shapes == ()


def test_complex_input_transform_is_not_picked(tree):
    # complex_32 has the best accuracy (0.6224) but feeds complex64 tensors; of the sizes known,
    # 64x64 is the most used (norm_64_flip, 5 trials).
    s = by_name(discover([str(tree)]))[FRACTAL]
    assert (s.dataset, s.transform, s.in_shape) == ("cifar-10", "norm_64_flip", (1, 3, 64, 64))
    assert s.prm["lr"] == 0.007333246537738807 and s.prm["dropout"] == 0.24232811019388945


def test_class_counts_and_resize_crop_sizes(tree):
    specs = by_name(discover([str(tree)]))
    c100 = specs[ALT_C100]
    assert (c100.dataset, c100.out_shape, c100.in_shape) == ("cifar-100", (100,), (1, 3, 256, 256))
    alt = specs[ALT_DICT_HP]  # its only trial: imagenette, norm_64_flip = Resize(64) + CenterCrop(64)
    assert (alt.dataset, alt.transform, alt.in_shape, alt.out_shape) == ("imagenette", "norm_64_flip", (1, 3, 64, 64), (10,))
    celeba = by_name(discover([str(tree)], dataset="celeba-gender", include=[GA128]))[GA128]
    assert celeba.dataset == "celeba-gender" and celeba.out_shape == (2,) and celeba.in_shape[1] == 3


def test_prm_holds_declared_and_recorded_hyperparameters(tree):
    specs = by_name(discover([str(tree)]))
    # Declares only {'lr': 0.001, 'momentum': 0.95} yet its Net reads prm['dropout']: the trial's value.
    assert specs[ALT_DICT_HP].prm["dropout"] == 0.4000206494348861
    assert specs[ALT_DICT_HP].prm["lr"] == 0.049084452795019426
    # Declares ['lr', 'momentum', 'batch', 'transform', 'epoch'].
    assert specs[RL_INIT].prm == {
        "batch": 64, "dropout": 0.2, "epoch": 1, "lr": 0.01, "momentum": 0.9, "transform": "echo",
    }


def test_model_without_trials_uses_defaults_and_says_so(tree):
    s = by_name(discover([str(tree)]))[NO_TRIALS]
    assert s.in_shape == (1, 3, 32, 32) and s.out_shape == (10,) and s.dataset is None
    assert s.prm == {"dropout": 0.2, "lr": 0.01, "momentum": 0.9}
    assert "no trials" in s.origin and "prm defaulted: dropout, lr, momentum" in s.origin
    # no trials of its own or of its family: the next size other models of the tree learned at, for a
    # retry on "output size too small"
    assert s.alt_in_shapes == ((1, 3, 64, 64),)


def test_trial_quirks_missing_key_and_broken_json(own_tree):
    tree = own_tree
    stat = tree / "ab" / "nn" / "stat" / "train"
    d = stat / f"img-classification_mnist_acc_{NO_TRIALS}"
    d.mkdir()
    (d / "1.json").write_text(json.dumps([{"accuracy": 0.5, "batch": 8, "lr": 0.123, "momentum": 0.4,
                                           "transform": "norm", "uid": "u1", "duration": 1}]))
    (d / "2.json").write_text("[{not json")
    warnings: list[str] = []
    s = by_name(discover([str(tree)], warn=warnings.append))[NO_TRIALS]
    assert (s.dataset, s.in_shape, s.prm["lr"], s.prm["dropout"]) == ("mnist", (1, 1, 28, 28), 0.123, 0.2)
    assert "prm defaulted: dropout" in s.origin
    assert len(warnings) == 1 and "2.json" in warnings[0]


def test_other_tasks_and_unknown_datasets_rank_last(own_tree):
    stat = own_tree / "ab" / "nn" / "stat" / "train"
    trial = {"accuracy": 0.99, "batch": 8, "lr": 0.5, "momentum": 0.5, "dropout": 0.5, "transform": "norm", "uid": "x"}
    for name in (f"obj-detection_mnist_map_{GA56}", f"img-classification_tiny-data_acc_{GA56}",
                 f"img-classification_tiny-data_acc_{NO_TRIALS}"):
        (stat / name).mkdir()
        (stat / name / "1.json").write_text(json.dumps([trial]))
    specs = by_name(discover([str(own_tree)]))
    assert specs[GA56].prm["lr"] == 0.13428770380323557  # still the cifar-10 img-classification trial
    s = specs[NO_TRIALS]
    assert (s.dataset, s.in_shape, s.out_shape, s.prm["lr"]) == ("tiny-data", (1, 3, 32, 32), (10,), 0.5)
    assert "unknown dataset tiny-data" in s.origin and "input size unknown" in s.origin


def test_user_shape_overrides_trials(tree):
    s = by_name(discover([str(tree)], in_shape=(1, 3, 64, 64), num_classes=5))[GA56]
    assert s.in_shape == (1, 3, 64, 64) and s.out_shape == (5,) and s.dataset == "cifar-10"
    assert s.alt_in_shapes == ()
    assert "in_shape given by the user" in s.origin


def test_syntax_error_in_tree_does_not_stop_discovery(own_tree):
    tree = own_tree
    (tree / "ab" / "nn" / "nn" / "broken.py").write_text("import torch\ndef supported_hyperparameters(:\n")
    warnings: list[str] = []
    specs = by_name(discover([str(tree)], warn=warnings.append))
    assert len(specs) == len(ALL) + 1
    assert specs["broken"].origin.startswith("unparsed: SyntaxError at broken.py:2")
    assert any("broken.py" in w for w in warnings)


def test_single_file_inside_a_tree_uses_its_trials(tree):
    (s,) = discover([str(tree / "ab" / "nn" / "nn" / f"{GA56}.py")])
    assert (s.name, s.dataset, s.in_shape) == (GA56, "cifar-10", (1, 3, 299, 299))


def test_nn_directory_of_a_tree_uses_its_trials(tree):
    specs = by_name(discover([str(tree / "ab" / "nn" / "nn")]))
    assert sorted(specs) == sorted(ALL) and specs[GA56].dataset == "cifar-10"


@pytest.mark.parametrize(
    ("transform", "dataset", "hw", "channels"),
    [
        ("norm", "cifar-10", (32, 32), 3),  # no size step: native
        ("echo", "mnist", (28, 28), 1),
        ("norm_64", "mnist", (64, 64), 1),  # Resize(64), CenterCrop(64)
        ("norm_32", "celeba-gender", (32, 32), 3),  # Resize(32) of unknown size, then CenterCrop(32)
        ("echo_128", "imagenette", (128, 128), 3),  # Resize((128,128))
        ("center_crop", "cifar-10", (64, 64), 3),  # CenterCrop(size=48), Resize((64,64))
        ("bf-v1-Pad_38", "svhn", (64, 64), 3),  # Pad(padding=3, ...), Resize((64,64))
        ("bf-v1-Grayscale_50", "cifar-10", (64, 64), 3),  # Grayscale(num_output_channels=3)
        ("bf-v1-Resize_ColorJit_Flip_Blur", "cifar-10", (256, 256), 3),  # RandomResizedCrop(256, ...)
        ("norm", "imagenette", None, 3),  # images of many sizes, nothing fixes them
        ("soft_pad", "cifar-10", None, 3),  # custom PadToSize step
        ("complex_32", "cifar-10", None, 3),  # custom NormalizeToFloat / ToComplex64 steps
    ],
)
def test_transform_geometry(transform, dataset, hw, channels):
    ops = parse_transform(LEMUR_TREE / "ab" / "nn" / "transform" / f"{transform}.py")
    geo = apply_transform(ops, lemur.DATASETS[dataset])
    assert (geo.hw, geo.channels) == (hw, channels)
    assert (geo.note == "") == (hw is not None)


def test_transform_geometry_pad_and_grayscale(tmp_path):
    f = tmp_path / "t.py"
    f.write_text("import torchvision.transforms as T\n\ndef transform(norm):\n"
                 "    return T.Compose([T.Pad(4), T.Grayscale(), T.Pad((1, 2)), T.ToTensor(), T.Normalize(*norm)])\n")
    geo = apply_transform(parse_transform(f), lemur.DATASETS["cifar-10"])
    assert (geo.hw, geo.channels) == ((32 + 8 + 4, 32 + 8 + 2), 1)


def test_whole_tree_discovery_is_torch_free():
    # Discovery parses files and never imports torch (the CLI starts without it).
    code = (
        "import sys\n"
        "from nnlite_tui.core.sources.discover import discover\n"
        f"specs = discover([{str(LEMUR_TREE)!r}])\n"
        "print(len(specs), 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    n, torch_loaded = out.stdout.split()
    assert int(n) == len(ALL) and torch_loaded == "False"


# --- directories, files, factories ------------------------------------------------------------------


def test_sample_models_defaults_and_mnist_shape():
    specs = by_name(discover([str(SAMPLES)]))
    assert len(specs) >= 8
    assert specs["mnist_lenet"].in_shape == (1, 1, 28, 28)
    assert "DEFAULT_IN_SHAPE" in specs["mnist_lenet"].origin
    others = [s for n, s in specs.items() if n != "mnist_lenet"]
    assert all(s.in_shape == (1, 3, 32, 32) and s.out_shape == (10,) for s in others)
    assert all(s.prm == {"dropout": 0.2, "lr": 0.01, "momentum": 0.9} for s in specs.values())
    assert all("prm defaulted: dropout, lr, momentum" in s.origin for s in specs.values())
    forced = by_name(discover([str(SAMPLES)], in_shape=(3, 64, 64), num_classes=100))
    assert forced["mnist_lenet"].in_shape == (1, 3, 64, 64) and forced["mnist_lenet"].out_shape == (100,)


def test_directory_skips_helpers_and_keeps_broken_files(tmp_path):
    shutil.copy(SAMPLES / "plain_cnn.py", tmp_path)
    (tmp_path / "helpers.py").write_text("def f():\n    return 1\n")
    (tmp_path / "_private.py").write_text("class Net: pass\n")
    (tmp_path / "bad.py").write_text("class Net(nn.Module)\n    pass\n")
    (tmp_path / "odd.py").write_text(
        "def supported_hyperparameters():\n    return {'lr', 'weight_decay', 'attn_dropout'}\nclass Net: pass\n"
    )
    warnings: list[str] = []
    specs = by_name(discover([str(tmp_path)], warn=warnings.append))
    assert sorted(specs) == ["bad", "odd", "plain_cnn"]
    assert specs["bad"].origin.startswith("unparsed: SyntaxError at bad.py:1")
    assert specs["odd"].prm == {"attn_dropout": 0.2, "dropout": 0.2, "lr": 0.01, "momentum": 0.9, "weight_decay": 0.5}
    assert any("helpers.py" in w and "no class Net" in w for w in warnings)
    assert any("bad.py" in w for w in warnings)


def test_single_file_source():
    (s,) = discover([str(SAMPLES / "plain_cnn.py")])
    assert (s.name, s.kind, s.in_shape) == ("plain_cnn", "lemur", (1, 3, 32, 32))


def test_missing_path_is_a_source_error(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(SourceError, match=str(missing)) as info:
        discover([str(SAMPLES), str(missing)])
    assert isinstance(info.value, ValueError)
    with pytest.raises(SourceError, match="nope.py"):
        discover([f"{missing}.py:make"])
    text = tmp_path / "notes.txt"
    text.write_text("not a model")
    with pytest.raises(SourceError, match="notes.txt"):
        discover([str(text)])


def test_bad_options_are_source_errors():
    for kwargs in ({"in_shape": (3, 32)}, {"num_classes": 0}, {"dataset": "imagenet-21k"}, {"limit": -1}):
        with pytest.raises(SourceError):
            discover([str(SAMPLES)], **kwargs)


def test_factory_specs(tmp_path, monkeypatch):
    f = tmp_path / "zoo.py"
    f.write_text("def make():\n    raise RuntimeError('built in the worker only')\n")
    (s,) = discover([f"{f}:make"])
    assert (s.kind, s.name, s.file, s.module, s.factory) == ("factory", "zoo.make", str(f), None, "make")
    assert s.sha256 == sources.sha256_file(str(f))
    pkg = tmp_path / "pkgsrc" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('discovery must not import the package')\n")
    (pkg / "models.py").write_text("def build():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgsrc"))
    (m,) = discover(["mypkg.models:build"])
    assert (m.kind, m.name, m.file, m.module, m.factory) == ("factory", "mypkg.models.build", None, "mypkg.models", "build")
    assert m.sha256 == sources.sha256_file(str(pkg / "models.py"))
    with pytest.raises(SourceError, match="module not found"):
        discover(["mypkg.nothere:build"])
    with pytest.raises(SourceError, match="bad factory name"):
        discover([f"{f}:not-a-name"])


def test_duplicate_names_are_made_unique(tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(SAMPLES / "plain_cnn.py", copy)
    shutil.copy(SAMPLES / "plain_cnn.py", copy / "plain_cnn~2.py")
    specs = discover([str(SAMPLES), str(copy)])
    names = [s.name for s in specs]
    assert len(names) == len(set(names))
    assert names.count("plain_cnn") == 1 and "plain_cnn~2" in names and "plain_cnn~3" in names
    # The original file named plain_cnn~2 keeps its name; the duplicate plain_cnn gets ~3.
    assert by_name(specs)["plain_cnn~3"].file == str(copy / "plain_cnn.py")
    assert [s.name for s in discover([str(SAMPLES), str(copy)])] == names


def test_filters_and_limit():
    all_names = [s.name for s in discover([str(SAMPLES)])]
    assert [s.name for s in discover([str(SAMPLES)], include=["mobilenet*"])] == ["mobilenetv1_mini", "mobilenetv2_mini"]
    assert "vit_tiny" not in [s.name for s in discover([str(SAMPLES)], exclude=["vit_*", "unet*"])]
    assert [s.name for s in discover([str(SAMPLES)], limit=3)] == all_names[:3]
    assert [s.name for s in discover([str(SAMPLES)], include=["*mini"], exclude=["mobilenetv1*"], limit=2)] == [
        "efficientnet_mini", "mobilenetv2_mini",
    ]


def test_sources_module_does_not_import_torch():
    code = (
        "import sys\nfrom nnlite_tui.core.sources.discover import discover\n"
        f"discover([{str(SAMPLES)!r}])\nprint('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"


def test_spec_round_trips_through_dict():
    for s in discover([str(SAMPLES)]):
        assert type(s).from_dict(json.loads(json.dumps(s.to_dict()))) == s


@pytest.mark.parametrize("body", ["X = " + "1+" * 300_000 + "1\n", "X = " + "-" * 200_000 + "1\n",
                                  "X = " + "[" * 200 + "]" * 200 + "\n", "# pad\n" * 800_000])
def test_a_source_that_cannot_be_parsed_is_skipped_with_a_cause_and_the_others_still_run(tmp_path, body):
    """A file nested past the parser's limits, or too large, is one skipped entry, never a stopped run."""
    shutil.copy(SAMPLES / "plain_cnn.py", tmp_path / "plain_cnn.py")
    (tmp_path / "deep.py").write_text(body + "class Net: pass\n")
    warned: list[str] = []
    specs = discover([str(tmp_path)], warn=warned.append)
    assert "plain_cnn" in [s.name for s in specs]
    assert any("deep.py" in w for w in warned), warned
