"""Run the ``ppaudit`` command in-process for the CLI tests: ``call(capsys, *args)`` gives
``(exit code, stdout, stderr)``."""

from ppaudit.cli import main


def call(capsys, *args):
    """``ppaudit.cli.main`` in-process with ``args`` (str() of each): (exit code, stdout, stderr)."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err
