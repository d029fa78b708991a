// TidingsStore module — see README architecture.
