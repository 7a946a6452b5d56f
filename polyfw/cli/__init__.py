"""The `polyfw` command line: parser builds each subcommand's flags (those of registered targets,
semirings, strategies and families generated from their registries), solving and commands hold the
handlers (each translates its arguments, calls polyfw's API and prints), main runs one. Only the
command being run is imported and given its flags: `polyfw solve` does not load CUDA or the explorer."""
from .usage import UsageError
from .main import READER_GONE, main
from .parser import build_parser

__all__ = ["READER_GONE", "UsageError", "build_parser", "main"]
