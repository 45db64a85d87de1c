"""Generation: the offline generator (workflow templates) and the LLM generator, behind one protocol (``base``)."""
