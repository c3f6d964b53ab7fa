"""Complete agents, each an `ActorLearnerBuilder` plus its config, networks and learning step."""
