"""`polyfw`'s entry point: parse, run the command, and turn every failure into one line."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .parser import build_parser, command_in
from .usage import UsageError

#: the exit status of a command whose reader closed the pipe (a process killed by SIGPIPE: 128 + 13)
READER_GONE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a failure is one line 'polyfw: error: ...' and exit status 1 (usage errors: 2).
    Output cut short by its reader (polyfw deps | head -1) ends quietly, status READER_GONE."""
    try:
        try:
            args = build_parser(command_in(sys.argv[1:] if argv is None else argv)).parse_args(argv)
        finally:
            sys.stdout.flush()  # --help into a closed pipe fails here, not at exit
        status = _run(args)
        sys.stdout.flush()  # what is still buffered fails here, not at exit
        return status
    except BrokenPipeError:
        # nothing more can be written to the reader; point stdout at devnull so the interpreter's
        # own flush at exit stays quiet too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return READER_GONE


def _run(args: argparse.Namespace) -> int:
    try:
        return args.run(args)
    except BrokenPipeError:
        raise  # main's: the reader went away, not a failure to report
    except Exception as error:  # noqa: BLE001 - every failure reaches the user as one line
        if args.debug:
            raise
        lines = str(error).strip().splitlines() or [type(error).__name__]
        more = " (--debug shows the rest)" if len(lines) > 1 else ""
        print(f"polyfw: error: {lines[0]}{more}", file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1
