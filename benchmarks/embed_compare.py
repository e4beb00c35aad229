"""The numpy MiniLM embedder beside ONNX Runtime (CPU) on the same weights and tokenizer.

Run with the project's venv from the repository root, after installing the two
packages this script alone needs (memctl itself never imports them):

    .venv/bin/pip install onnx onnxruntime onnx-ir
    .venv/bin/python benchmarks/embed_compare.py [--chars 100,400,1000] [--texts 128]
        [--threads N] [--locomo FILE] [--against REV] [--default-blas-threads]

Without them it compares memctl's numpy embedders alone (today's, and REV's).

The ONNX graph is built here from memctl's own laid-out weights with the `onnx`
package's helper API (no torch, no download): the same BERT layers as
memctl/embed/bert.py, GELU as erf, mean pooling and L2 norm done in numpy.
ONNX Runtime runs it on one intra-op thread: fp32, and the reduced-precision
variants of ``VARIANTS`` (int8 dynamic per tensor and per channel, with the
feed-forward output product left in fp32, static QDQ, 8-bit weight blocks
(MatMulNBits, needs ``onnx-ir``), fp16 projections). Every figure is CPU
seconds of this process (time.process_time) per text, numpy's BLAS on one thread
too, the embedders taking turns in one run; the vectors' agreement with numpy's
(cosine min / 1st percentile / mean) is printed beside. ``--threads 2`` runs two
batches at once in two Python threads, as memctl's imports do, and adds the wall
time. ``--locomo FILE`` adds the cosines over the distinct turns of a LoCoMo file
(real texts, most of them short). ``--against REV`` adds memctl's numpy
embedder as it was at git revision REV, beside today's in the same process.
``--default-blas-threads`` leaves OpenBLAS its default thread count and compares
only REV's embedder (measured first, at every length) with today's (which limits
BLAS to one thread when it loads): what a write cost before and after that change.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

if "--default-blas-threads" not in sys.argv:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks import locomo  # noqa: E402
from benchmarks.embed_speed import sentences  # noqa: E402
from memctl.embed import bert, local  # noqa: E402

BATCH = 32
ROOT = Path(__file__).resolve().parents[1]


def _module_at(revision: str, path: str, name: str, scratch: Path) -> ModuleType | None:
    """The module at ``path`` as it was at ``revision``, loaded as ``name``; None when the
    revision has no such file."""
    shown = subprocess.run(
        ["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True
    )
    if shown.returncode != 0:
        return None
    file = scratch / f"{name}.py"
    file.write_text(shown.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def embedder_at(revision: str, scratch: Path) -> local.LocalEmbedder:
    """memctl/embed/local.py as it was at ``revision``, loaded beside today's, with that
    revision's forward pass (memctl/embed/bert.py, where it has one)."""
    import memctl.embed

    then_bert = _module_at(revision, "memctl/embed/bert.py", "bert_then", scratch)
    if then_bert is not None:  # REV's local.py reads REV's forward pass, not today's
        sys.modules["memctl.embed.bert"] = memctl.embed.bert = then_bert
    try:
        module = _module_at(revision, "memctl/embed/local.py", "local_then", scratch)
    finally:
        sys.modules["memctl.embed.bert"] = memctl.embed.bert = bert
    assert module is not None, f"no memctl/embed/local.py at {revision}"
    then: local.LocalEmbedder = module.LocalEmbedder(batch_size=BATCH, cache_dir=None)
    return then


def texts_of(chars: int, count: int) -> list[str]:
    """``count`` distinct texts of ``chars`` characters, sentences run together."""
    pool = sentences(count * (chars // 60 + 2), seed=chars)
    out, current = [], ""
    for sentence in pool:
        current = f"{current} {sentence}".strip()
        if len(current) >= chars:
            out.append(current[:chars])
            current = ""
        if len(out) == count:
            break
    return out


def build_graph(weights: bert.Weights) -> bytes:
    """An ONNX model: token ids (batch, tokens) and mask -> last hidden states."""
    from onnx import TensorProto, helper, numpy_helper

    initializers = []
    nodes = []

    def const(name: str, array: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(kind: str, inputs: list[str], **attributes: object) -> str:
        output = f"t{len(nodes)}"
        nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output

    f32 = np.float32
    const("word", weights.word)
    const("position", weights.position)
    const("token_type", weights.token_type[0])
    const("zero", np.array([0], np.int64))
    const("one", np.array([1], np.int64))
    const("axes12", np.array([1, 2], np.int64))
    const("qkv_shape", np.array([0, 0, 3, bert.HEADS, bert.HEAD_DIM], np.int64))
    const("hidden_shape", np.array([0, 0, bert.DIM], np.int64))
    const("masked", np.array(-1e9, f32))
    const("onef", np.array(1.0, f32))
    const("halff", np.array(0.5, f32))
    const("inv_sqrt2", np.array(1 / np.sqrt(2), f32))
    tokens = node("Gather", [node("Shape", ["ids"]), "one"], axis=0)
    x = node("Add", [node("Gather", ["word", "ids"], axis=0), "token_type"])
    x = node("Add", [x, node("Slice", ["position", "zero", tokens, "zero"])])
    x = node(
        "LayerNormalization",
        [x, const("norm_g", weights.norm_g), const("norm_b", weights.norm_b)],
        epsilon=bert.LAYER_NORM_EPS,
    )
    bias = node("Mul", [node("Sub", ["onef", "mask"]), "masked"])
    bias = node("Unsqueeze", [bias, "axes12"])  # (batch, 1, 1, tokens)
    for i, layer in enumerate(weights.layers):
        w = {  # not the column blocks: numpy's way of taking a query's few tokens
            name: const(f"{i}.{name}", getattr(layer, name))
            for name in layer.__dataclass_fields__
            if not name.endswith("_blocks")
        }
        qkv = node("Add", [node("MatMul", [x, w["qkv_w"]]), w["qkv_b"]])
        qkv = node("Transpose", [node("Reshape", [qkv, "qkv_shape"])], perm=[2, 0, 3, 1, 4])
        parts = [f"{i}.q", f"{i}.k", f"{i}.v"]
        nodes.append(helper.make_node("Split", [qkv], parts, axis=0, num_outputs=3))
        q, k, v = (node("Squeeze", [part, "zero"]) for part in parts)
        scores = node("MatMul", [q, node("Transpose", [k], perm=[0, 1, 3, 2])])
        attention = node("Softmax", [node("Add", [scores, bias])], axis=-1)
        context = node("Transpose", [node("MatMul", [attention, v])], perm=[0, 2, 1, 3])
        context = node("Reshape", [context, "hidden_shape"])
        out = node("Add", [node("MatMul", [context, w["attn_out_w"]]), w["attn_out_b"]])
        x = node(
            "LayerNormalization",
            [node("Add", [out, x]), w["attn_norm_g"], w["attn_norm_b"]],
            epsilon=bert.LAYER_NORM_EPS,
        )
        hidden = node("Add", [node("MatMul", [x, w["inter_w"]]), w["inter_b"]])
        phi = node("Erf", [node("Mul", [hidden, "inv_sqrt2"])])
        phi = node("Mul", [node("Add", [phi, "onef"]), "halff"])
        out = node("Add", [node("MatMul", [node("Mul", [hidden, phi]), w["out_w"]]), w["out_b"]])
        x = node(
            "LayerNormalization",
            [node("Add", [out, x]), w["out_norm_g"], w["out_norm_b"]],
            epsilon=bert.LAYER_NORM_EPS,
        )
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", 384])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return bytes(model.SerializeToString())


def session(model: bytes | str) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def onnx_embedder(
    embedder: local.LocalEmbedder, runner: object, threads: int = 1
) -> Callable[[list[str]], np.ndarray]:
    """embed() as LocalEmbedder does it (length-sorted batches, ``threads`` at once), the
    forward in ONNX Runtime."""
    tokenizer, _ = embedder._load()

    def embed(texts: list[str]) -> np.ndarray:
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        rows = [encodings[i].ids for i in order]
        out = np.empty((len(texts), bert.DIM), dtype=np.float32)

        def forward(batch: slice) -> None:
            ids, mask = bert.pad(rows[batch])
            hidden = runner.run(None, {"ids": ids, "mask": mask})[0]  # type: ignore[attr-defined]
            pooled = np.einsum("btd,bt->bd", hidden, mask) / mask.sum(axis=1, keepdims=True)
            out[order[batch]] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(forward, bert.batches([len(row) for row in rows], BATCH)))
        return out

    return embed


def cpu_per_text(embed: Callable[[list[str]], np.ndarray], texts: list[str]) -> tuple[float, float]:
    """(CPU, wall) milliseconds per text of one call."""
    began, cpu = time.perf_counter(), time.process_time()
    embed(texts)
    return (
        (time.process_time() - cpu) / len(texts) * 1000,
        (time.perf_counter() - began) / len(texts) * 1000,
    )


def agreement(vectors: np.ndarray, reference: np.ndarray) -> str:
    cosines = (vectors * reference).sum(axis=1)
    return (
        f"cosine to numpy min {cosines.min():.4f} p1 {np.percentile(cosines, 1):.4f} "
        f"mean {cosines.mean():.5f}"
    )


def report(
    name: str,
    embed: Callable[[list[str]], np.ndarray],
    texts: list[str],
    reference: np.ndarray,
    rounds: int,
) -> None:
    vectors = embed(texts)
    times = sorted(cpu_per_text(embed, texts) for _ in range(rounds))
    cpu, wall = times[len(times) // 2]
    print(
        f"  {name:<52} {cpu:6.1f} ms CPU {wall:6.1f} ms wall per text (median of "
        f"{rounds}; min {times[0][0]:.1f})  {agreement(vectors, reference)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", default="100,400,1000", help="text lengths, comma-separated")
    parser.add_argument("--texts", type=int, default=128, help="texts per length")
    parser.add_argument("--rounds", type=int, default=3, help="turns each embedder takes")
    parser.add_argument("--against", metavar="REV", help="also memctl's embedder at git REV")
    parser.add_argument("--threads", type=int, default=1, help="forward passes at once")
    parser.add_argument("--locomo", type=Path, help="a LoCoMo file: cosines over its turns")
    parser.add_argument(
        "--default-blas-threads",
        action="store_true",
        help="OpenBLAS's own thread count; REV's embedder, then today's (needs --against)",
    )
    args = parser.parse_args()
    lengths = [int(c) for c in args.chars.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        then = embedder_at(args.against, Path(scratch)) if args.against else None
        if args.default_blas_threads:
            if then is None:
                parser.error("--default-blas-threads needs --against REV")
            now = local.LocalEmbedder(batch_size=BATCH)
            print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
            for name, embedder in ((f"numpy at {args.against}", then), ("numpy today", now)):
                for chars in lengths:
                    texts = texts_of(chars, args.texts)
                    reference = embedder.embed(texts)
                    print(f"{chars}-character texts, {len(texts)} of them, batch {BATCH}:")
                    report(name, embedder.embed, texts, reference, args.rounds)
            return
        compare(lengths, args, then, Path(scratch))


def compare(
    lengths: list[int], args: argparse.Namespace, then: local.LocalEmbedder | None, scratch: Path
) -> None:
    # CPU per text like the others: one forward pass at a time unless --threads says more
    embedder = local.LocalEmbedder(batch_size=BATCH, threads=args.threads)
    embedder.embed(["warm-up"])
    embedders: dict[str, Callable[[list[str]], np.ndarray]] = {"numpy today": embedder.embed}
    if then is not None:
        embedders[f"numpy at {args.against}"] = then.embed
    if importlib.util.find_spec("onnxruntime") and importlib.util.find_spec("onnx"):
        embedders.update(onnx_embedders(embedder, scratch, args.threads))
    else:
        print("onnx and onnxruntime are not installed: numpy alone")
    print(f"{args.threads} forward pass(es) at once; {load()}")
    if args.locomo is not None:
        turns = sorted({turn.text for c in locomo.load(args.locomo) for turn in c.turns})
        reference = embedder.embed(turns)
        print(f"\n{len(turns)} distinct LoCoMo turns (agreement only):")
        for name, embed in embedders.items():
            print(f"  {name:<52} {agreement(embed(turns), reference)}")
    for chars in lengths:
        texts = texts_of(chars, args.texts)
        reference = embedder.embed(texts)
        print(f"\n{chars}-character texts, {len(texts)} of them, batch {BATCH}:")
        for name, embed in embedders.items():
            report(name, embed, texts, reference, args.rounds)
    print(load())


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def named_projections(model: bytes) -> object:
    """The model with every node named, the products with a weight ``MatMul_<weight>``
    (e.g. ``MatMul_3.out_w``), so that a quantizer can be told which to leave alone."""
    import onnx

    proto = onnx.load_from_string(model)
    weights = {initializer.name for initializer in proto.graph.initializer}
    for index, item in enumerate(proto.graph.node):
        weighted = item.op_type == "MatMul" and item.input[1] in weights
        item.name = f"MatMul_{item.input[1]}" if weighted else f"{item.op_type}_{index}"
    return proto


def fp16_projections(proto: object, path: Path) -> None:
    """The products with a weight in fp16 (weights stored so, activations cast around them)."""
    from onnx import TensorProto, helper, numpy_helper

    graph = proto.graph  # type: ignore[attr-defined]
    weights = {initializer.name: initializer for initializer in graph.initializer}
    nodes = []
    for item in graph.node:
        if item.op_type != "MatMul" or item.input[1] not in weights:
            nodes.append(item)
            continue
        weight = weights[item.input[1]]
        half = numpy_helper.to_array(weight).astype(np.float16)
        weight.CopyFrom(numpy_helper.from_array(half, weight.name))
        source, target = item.input[0], item.output[0]
        item.input[0], item.output[0] = f"{source}.h", f"{target}.h"
        nodes.append(helper.make_node("Cast", [source], [item.input[0]], to=TensorProto.FLOAT16))
        nodes.append(item)
        nodes.append(helper.make_node("Cast", [item.output[0]], [target], to=TensorProto.FLOAT))
    del graph.node[:]
    graph.node.extend(nodes)
    import onnx

    onnx.save(proto, str(path))


class Calibration:
    """Token ids of a few texts for static quantization (onnxruntime's CalibrationDataReader)."""

    def __init__(self, embedder: local.LocalEmbedder, texts: list[str]) -> None:
        tokenizer, _ = embedder._load()
        rows = [encoding.ids for encoding in tokenizer.encode_batch(texts)]
        feeds = []
        for start in range(0, len(rows), 16):
            ids, mask = bert.pad(rows[start : start + 16])
            feeds.append({"ids": ids, "mask": mask})
        self.feeds = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)


# The reduced-precision variants: name -> how quantize_dynamic is called (projections
# only: MatMul with a weight; the attention's own products and the embeddings stay fp32).
VARIANTS: dict[str, dict[str, object]] = {
    "int8 dynamic, per tensor (ORT defaults)": {},
    "int8 dynamic, per tensor": {"op_types_to_quantize": ["MatMul"]},
    "int8 dynamic, per channel": {"op_types_to_quantize": ["MatMul"], "per_channel": True},
    "int8 dynamic, per channel, reduce_range": {
        "op_types_to_quantize": ["MatMul"],
        "per_channel": True,
        "reduce_range": True,
    },
    "int8 dynamic, per channel, FFN out fp32": {
        "op_types_to_quantize": ["MatMul"],
        "per_channel": True,
        "nodes_to_exclude": [f"MatMul_{i}.out_w" for i in range(bert.LAYERS)],
    },
    "int8 dynamic, per channel, layers 1-4": {
        "op_types_to_quantize": ["MatMul"],
        "per_channel": True,
        "nodes_to_exclude": [
            f"MatMul_{i}.{w}"
            for i in (0, bert.LAYERS - 1)
            for w in ("qkv_w", "attn_out_w", "inter_w", "out_w")
        ],
    },
}


def onnx_embedders(
    embedder: local.LocalEmbedder, scratch: Path, threads: int
) -> dict[str, Callable[[list[str]], np.ndarray]]:
    began = time.process_time()
    model = build_graph(embedder._load()[1])
    print(
        f"ONNX graph built in {time.process_time() - began:.2f} s CPU ({len(model) / 1e6:.0f} MB)"
    )
    import onnx
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    fp32_path = scratch / "fp32.onnx"
    onnx.save(named_projections(model), str(fp32_path))
    paths: dict[str, Path] = {"fp32": fp32_path}
    for number, (name, options) in enumerate(VARIANTS.items()):
        paths[name] = scratch / f"dynamic{number}.onnx"
        quantize_dynamic(fp32_path, paths[name], weight_type=QuantType.QInt8, **options)  # type: ignore[arg-type]
    paths["int8 static QDQ, per channel (MinMax)"] = scratch / "qdq.onnx"
    quantize_static(
        fp32_path,
        paths["int8 static QDQ, per channel (MinMax)"],
        Calibration(embedder, texts_of(400, 64) + texts_of(100, 96)),  # type: ignore[arg-type]
        quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        calibrate_method=CalibrationMethod.MinMax,
        extra_options={"MatMulConstBOnly": True},
    )
    if importlib.util.find_spec("onnx_ir"):  # MatMulNBits' quantizer needs it
        from onnxruntime.quantization.matmul_nbits_quantizer import (
            DefaultWeightOnlyQuantConfig,
            MatMulNBitsQuantizer,
        )

        for level, what in ((0, "fp32 compute"), (4, "int8 compute")):
            name = f"8-bit weight blocks of 32, {what}"
            paths[name] = scratch / f"nbits{level}.onnx"
            config = DefaultWeightOnlyQuantConfig(
                block_size=32, is_symmetric=True, accuracy_level=level, bits=8
            )
            quantizer = MatMulNBitsQuantizer(onnx.load(str(fp32_path)), algo_config=config)
            quantizer.process()
            quantizer.model.save_model_to_file(str(paths[name]), False)
    paths["fp16 projections"] = scratch / "fp16.onnx"
    fp16_projections(onnx.load(str(fp32_path)), paths["fp16 projections"])
    return {
        f"onnxruntime {name}": onnx_embedder(embedder, session(str(path)), threads)
        for name, path in paths.items()
    }


if __name__ == "__main__":
    main()
