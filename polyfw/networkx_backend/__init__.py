"""polyfw as a networkx backend: `nx.floyd_warshall_numpy(G, backend="polyfw")`, or every call
through `nx.config.backend_priority = ["polyfw"]`.

info: what networkx reads at import (the dispatched functions, declared once); graph: the
conversions; algorithms: networkx's functions on polyfw's kernels; interface: the object the
entry point names, with can_run and should_run.
"""
