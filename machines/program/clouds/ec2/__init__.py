"""EC2 in the program: its settings and its resources."""
