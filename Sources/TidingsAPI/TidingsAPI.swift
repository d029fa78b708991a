// TidingsAPI module — see README architecture.
