// Observing module — see README architecture.
