"""Rule convert_llm: convert the GGUF once into a transformers folder
(safetensors, float32; ``ppaudit.models.llm.convert_gguf``). Loading the GGUF directly parses its
262k-token vocabulary for minutes on 2 cores; the folder loads in seconds."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import os  # noqa: E402

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch is imported
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import time  # noqa: E402

import torch  # noqa: E402

from ppaudit.models.llm import convert_gguf  # noqa: E402

torch.set_num_threads(snakemake.threads)  # noqa: F821
t0 = time.perf_counter()
folder = convert_gguf(snakemake.input.gguf, snakemake.output.folder)  # noqa: F821
log.info("converted %s -> %s in %.1f s", snakemake.input.gguf, folder, time.perf_counter() - t0)  # noqa: F821
