"""What polyfw knows of the machine it runs on: the tuning table of fastest configurations per
CPU and target (tuning), an independent min-plus ceiling to judge the kernels by (ceiling), and
the report of the CPU and the register blocks chosen on it (info)."""
