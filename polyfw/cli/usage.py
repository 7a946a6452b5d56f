"""The error of arguments that parse but do not go together (every command's handlers raise it)."""


class UsageError(ValueError):
    """Arguments that parse but do not go together: exit status 2, like argparse's own."""
