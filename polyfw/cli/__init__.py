"""The `polyfw` command line: parser builds each subcommand's flags (those of registered targets,
semirings, strategies and families generated from their registries), commands holds the handlers
(each translates its arguments, calls polyfw's API and prints), main runs one."""
from .commands import UsageError
from .main import READER_GONE, main
from .parser import build_parser

__all__ = ["READER_GONE", "UsageError", "build_parser", "main"]
