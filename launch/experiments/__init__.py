"""An experiment: its config, the one construction path (AgentParts), summaries and interrupts."""
