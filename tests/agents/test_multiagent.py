"""IPPO/MAPPO on the fake multi-agent environment: shared parameters learn from every agent, absent agents' steps
count for nothing, policies act for every agent, and bad input (specs, mappings, environments) is named."""

import dataclasses
import json

import dm_env
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fakes import FakeActor, fake_environment_factory, fake_multiagent_environment, smoke_overrides
from program_launcher import Launcher, line_after
from stack import long_test, require

from acmelike.specs import make_environment_spec
from acmelike.types import Step
from acmelike.wrappers.pettingzoo_adapter import AgentObservation
from agents.ippo import learning
from agents.ippo.builder import multiagent_categorical_core
from agents.ippo.config import IPPOConfig, MAPPOConfig
from agents.ippo.networks import make_networks
from launch.experiments.make import make_experiment_config

IDS = ("a", "b", "c")
OBSERVATION_SIZE = 2  # the fake's; the actor's first layer sees [observation, one-hot id]


def _spec(observation_sizes=None):
    return make_environment_spec(fake_multiagent_environment(0, observation_sizes=observation_sizes))


def _items(num_items, mask, seed=0):
    """`learning.loss` inputs for the fake's three agents sharing one policy, with per-agent `mask` [3]."""
    rng = np.random.default_rng(seed)
    normal = lambda *shape: jnp.asarray(rng.normal(size=shape), jnp.float32)  # noqa: E731
    return {
        "global_state": normal(num_items, 3 * OBSERVATION_SIZE),
        "policies": {"shared": dict(
            observation=normal(num_items, 3, OBSERVATION_SIZE),
            action=jnp.asarray(rng.integers(0, 3, (num_items, 3)), jnp.int32),
            log_prob=jnp.full((num_items, 3), np.log(1 / 3), jnp.float32),
            advantage=normal(num_items, 3),
            returns=normal(num_items, 3),
            mask=jnp.broadcast_to(jnp.asarray(mask, jnp.float32), (num_items, 3)),
        )},
    }


@pytest.mark.parametrize("config_class", [IPPOConfig, MAPPOConfig])
def test_every_agents_gradient_reaches_the_shared_parameters(config_class):
    config = config_class(hidden_sizes=(8,))
    networks = make_networks(_spec(), config)
    params = networks.init(jax.random.PRNGKey(0))

    loss_gradient = jax.jit(jax.grad(lambda p, items: learning.loss(networks, config, p, items)[0]))

    def gradient(mask):
        return loss_gradient(params, _items(16, mask))

    only_a, only_b = gradient([1, 0, 0]), gradient([0, 1, 0])
    for grads in (only_a, only_b):  # one agent's steps alone move every shared parameter
        assert all(float(jnp.abs(leaf).sum()) > 0 for leaf in jax.tree_util.tree_leaves(grads))
    # ... and each moves its own row of the agent-id input (rows 2, 3, 4 of the actor's first kernel), not another's.
    rows = lambda grads: jnp.abs(grads["shared"]["params"]["MLP_0"]["Dense_0"]["kernel"]).sum(-1)  # noqa: E731
    assert float(rows(only_a)[2]) > 0 and float(rows(only_a)[3]) == 0
    assert float(rows(only_b)[3]) > 0 and float(rows(only_b)[2]) == 0
    both = gradient([1, 1, 0])
    assert not np.allclose(jax.tree_util.tree_leaves(both)[0], jax.tree_util.tree_leaves(only_a)[0])


def _steps(seed, active):
    """A batch of 1 sequence of R rows for the three fake agents, random but for `active` [R, 3] (who acts where)."""
    rng = np.random.default_rng(seed)
    rows = active.shape[0]

    def per_agent(draw):
        return {a: draw().astype(np.float32) for a in IDS}

    return Step(
        observation={a: AgentObservation(rng.normal(size=(1, rows, OBSERVATION_SIZE)).astype(np.float32),
                                         active[None, :, i].astype(bool)) for i, a in enumerate(IDS)},
        action={a: rng.integers(0, 3, (1, rows)).astype(np.int32) for a in IDS},
        reward=per_agent(lambda: rng.normal(size=(1, rows))),
        discount=per_agent(lambda: rng.uniform(size=(1, rows))),
        start_of_episode=np.zeros((1, rows), bool),
        extras={"log_prob": per_agent(lambda: np.log(rng.uniform(0.1, 0.9, (1, rows))))},
    )


@pytest.mark.parametrize("config_class", [IPPOConfig, MAPPOConfig])
def test_steps_of_absent_agents_count_for_nothing(config_class):
    """Agent "a" acts at rows 0-1 and leaves (row 2 holds its final observation, which bootstraps its last
    step), "b" acts throughout, "c" never acts. Changing whatever "a" did or received at rows it did not act on,
    its observations after the final one, and everything of "c", changes no loss. (MAPPO's critic sees every
    observation in the global state, where an absent agent's is held: there observations are left as they are.)"""
    config = config_class(hidden_sizes=(8,))
    networks = make_networks(_spec(), config)
    params = networks.init(jax.random.PRNGKey(1))
    active = np.array([[1, 1, 0]] * 2 + [[0, 1, 0]] * 4)
    steps, other = _steps(0, active), _steps(1, active)

    def loss(steps):
        items = learning.policy_batches(networks, config, params, steps)
        return float(learning.loss(networks, config, params, items)[0]), items

    reference, items = loss(steps)
    np.testing.assert_array_equal(items["policies"]["shared"]["mask"][:, :], active[:5])

    acted = active[None, :, 0].astype(bool)  # rows where "a" acted: what it did there, and received, counts
    observed = np.arange(active.shape[0])[None] <= 2  # its observations up to its final one count

    def mixed(mine, theirs, keep):
        return {"a": np.where(keep, mine["a"], theirs["a"]), "b": mine["b"], "c": theirs["c"]}

    observation = steps.observation
    if not config.centralised_critic:
        observation = dict(observation, c=other.observation["c"], a=observation["a"]._replace(observation=np.where(
            observed[..., None], observation["a"].observation, other.observation["a"].observation)))
    changed = steps._replace(
        observation=observation,
        action=mixed(steps.action, other.action, acted),
        reward=mixed(steps.reward, other.reward, acted),
        discount=mixed(steps.discount, other.discount, acted),
        extras={"log_prob": mixed(steps.extras["log_prob"], other.extras["log_prob"], acted)},
    )
    assert loss(changed)[0] == pytest.approx(reference, rel=1e-6)
    # Control: what an active agent received does count.
    assert loss(steps._replace(reward=dict(steps.reward, b=steps.reward["b"] + 1.0)))[0] != pytest.approx(
        reference, rel=1e-6)


def test_the_policy_acts_for_every_agent_with_its_log_probability():
    environment = fake_multiagent_environment(0)
    networks = make_networks(make_environment_spec(environment), IPPOConfig(hidden_sizes=(8,)))
    params = networks.init(jax.random.PRNGKey(0))
    observation = environment.reset().observation
    for greedy in (False, True):
        policy = multiagent_categorical_core(networks, greedy=greedy)
        actions, state = policy.select_action(params, observation, policy.init(jax.random.PRNGKey(0)))
        assert set(actions) == set(IDS) and all(actions[a].dtype == jnp.int32 for a in IDS)
        assert set(policy.get_extras(state)["log_prob"]) == set(IDS)
        environment.step(jax.tree_util.tree_map(np.asarray, actions))


def test_policy_mapping_gives_each_team_its_own_parameters():
    config = IPPOConfig(hidden_sizes=(8,), policy_mapping="a:red,b:blue,c:blue")
    networks = make_networks(_spec(observation_sizes=(4, 2, 2)), config)
    assert {name: policy.agent_ids for name, policy in networks.policies.items()} == {"red": ("a",),
                                                                                     "blue": ("b", "c")}
    assert set(networks.init(jax.random.PRNGKey(0))) == {"red", "blue"}


def test_agents_sharing_parameters_must_have_the_same_specs():
    with pytest.raises(ValueError, match=r"IPPO: agents 'a' and 'c' share the parameters of policy 'shared', but "
                                         r"their observation specs differ.*policy_mapping=a:a,c:c"):
        make_networks(_spec(observation_sizes=(2, 2, 5)), IPPOConfig())


def test_a_mapping_naming_an_unknown_agent_is_an_error():
    with pytest.raises(ValueError, match=r"MAPPO: policy_mapping names agent 'z', which the environment does not "
                                         r"have; its agents are a, b, c"):
        make_networks(_spec(), MAPPOConfig(policy_mapping="a:x,z:y"))
    with pytest.raises(ValueError, match=r"IPPOConfig.policy_mapping = 'a'; it must be \"agent_id:policy,...\""):
        IPPOConfig(policy_mapping="a")


def test_multiagent_and_single_agent_environments_name_the_agents_that_fit():
    with pytest.raises(ValueError, match=r"IPPO needs a multi-agent environment.*Agents for discrete actions: "
                                         r"(?!.*ippo).*dqn"):
        make_experiment_config(agent="ippo", environment="fake", max_num_actor_steps=1,
                               environment_factory=fake_environment_factory("discrete"))
    with pytest.raises(ValueError, match=r"DQN needs a discrete action space.*Agents for discrete actions of "
                                         r"multi-agent environments: .*ippo, mappo"):
        make_experiment_config(agent="dqn", environment="mpe/simple_spread_v3", max_num_actor_steps=1)


def test_mpe_environments_are_made_from_their_names():
    config = make_experiment_config(agent="mappo", environment="mpe/simple_adversary_v3", max_num_actor_steps=1,
                                    config_overrides=["policy_mapping=adversary_0:adversary"])
    assert config.target_return is None and dataclasses.is_dataclass(config)
    with pytest.raises(ValueError, match=r"agents 'adversary_0' and 'agent_0' share the parameters"):
        make_experiment_config(agent="ippo", environment="mpe/simple_adversary_v3", max_num_actor_steps=1)


# Independent learners: a builder of builders.


def test_the_decentralised_actor_gives_each_agent_its_own_episode():
    """Agent "a" terminates after 3 steps, "b" is truncated after 5, "c" after 6: each single-agent actor sees
    exactly its own steps, its last one a LAST with its own reward and discount, and acts only while present."""
    from agents.independent.builder import DecentralisedActor

    environment = fake_multiagent_environment(0)
    actors = {agent: FakeActor(policy=lambda observation: np.int32(1)) for agent in IDS}
    actor = DecentralisedActor(actors, environment.action_spec())
    timestep = environment.reset()
    actor.observe_first(timestep)
    while not timestep.last():
        action = actor.select_action(timestep.observation)
        timestep = environment.step(action)
        actor.observe(action, timestep)
    for index, (agent, steps, discount) in enumerate([("a", 3, 0.0), ("b", 5, 1.0), ("c", 6, 1.0)]):
        calls = actors[agent].calls
        assert [name for name, _ in calls] == ["observe_first"] + ["select_action", "observe"] * steps
        observed = [timestep for name, (action, timestep) in
                    ((name, argument) for name, argument in calls if name == "observe")]
        assert [t.step_type for t in observed] == [dm_env.StepType.MID] * (steps - 1) + [dm_env.StepType.LAST]
        assert [float(t.reward) for t in observed] == [t + 10 * index + 1 for t in range(1, steps + 1)]
        assert float(observed[-1].discount) == discount
        np.testing.assert_array_equal(observed[-1].observation, np.full(2, 100 * index + steps))


def test_independent_learners_share_parameters_within_a_policy_only():
    from agents.independent import AGENT, IndependentDQNConfig

    networks = AGENT.make_networks(_spec(), IndependentDQNConfig(hidden_sizes=(8,)))
    assert dict(networks.agents) == {"a": ("a",), "b": ("b",), "c": ("c",)}
    config = IndependentDQNConfig(hidden_sizes=(8,), policy_mapping="b:team,c:team")
    assert dict(AGENT.make_networks(_spec(observation_sizes=(4, 2, 2)), config).agents) == {"a": ("a",),
                                                                                           "team": ("b", "c")}
    with pytest.raises(ValueError, match=r"independent dqn: agents 'b' and 'c' share the parameters of policy "
                                         r"'team', but their observation specs differ"):
        AGENT.make_networks(_spec(observation_sizes=(2, 2, 5)), config)
    with pytest.raises(ValueError, match=r"independent dqn: policy_mapping names agent 'd'"):
        AGENT.make_networks(_spec(), IndependentDQNConfig(policy_mapping="d:x"))


def test_multiagent_agents_fit_the_mpe_environments_their_specs_allow():
    from launch.experiments.make import environments_that_fit
    from launch.registry import agent_definition

    # simple_adversary's agents have different observation sizes: one shared policy cannot take them all.
    assert environments_that_fit(agent_definition("ippo")) == ["mpe/simple_spread_v3"]
    assert environments_that_fit(agent_definition("independent_dqn")) == ["mpe/simple_adversary_v3",
                                                                          "mpe/simple_spread_v3"]
    with pytest.raises(ValueError, match=r"ippo acts for several agents, in one environment per actor"):
        make_experiment_config(agent="ippo", environment="mpe/simple_spread_v3", max_num_actor_steps=1, num_envs=4)
    with pytest.raises(ValueError, match=r"independent_dqn runs one single-agent actor per agent.*ippo, mappo"):
        make_experiment_config(agent="independent_dqn", environment="mpe/simple_spread_v3", max_num_actor_steps=1,
                               inference="central")
    assert make_experiment_config(agent="mappo", environment="mpe/simple_spread_v3", max_num_actor_steps=1,
                                  inference="central").inference == "central"


@pytest.mark.classic
@pytest.mark.parametrize("agent, launch, environment", [
    ("ippo", "local_mt", "mpe/simple_spread_v3"),
    pytest.param("mappo", "local_mp", "mpe/simple_spread_v3", marks=long_test),
    pytest.param("independent_dqn", "local_mt", "mpe/simple_adversary_v3", marks=long_test),
    pytest.param("ippo", "ray", "mpe/simple_spread_v3", marks=long_test),  # ~60 s: a local Ray cluster starts
    pytest.param("ippo", "local_mt --inference central", "mpe/simple_spread_v3", marks=long_test),
])
def test_multiagent_agents_run_as_distributed_programs(agent, launch, environment, tmp_path):
    """The command line, as a person runs it: two actors, each stepping its own multi-agent environment."""
    require("launchpad")
    smoke = [arg for text in smoke_overrides(agent) for arg in ("--config", text)]  # learner steps within 600 steps
    launcher = Launcher("--agent", agent, "--env", environment, "--launch", *launch.split(), "--actors", 2,
                        "--steps", 600, *smoke, run_dir=tmp_path, command_line=True)
    assert launcher.wait(timeout=300) == 0, launcher.output[-5000:]
    summary = json.loads("{" + line_after(launcher.output, "{"))
    assert summary["agent"] == agent and summary["env_steps"] >= 600 and summary["learner_steps"] > 0, summary
    assert launcher.left_behind() == []


def test_a_multiagent_run_resumes_and_its_snapshot_plays_back_into_a_gif(tmp_path):
    """As a person would: train IPPO on simple_spread in one process, resume it to a larger budget, then
    `launch.cli.evaluate` its snapshot with a video. The summary, CSV and evaluation carry each agent's return."""
    from run_helpers import command_line, csv_column, summary_line

    from acmelike.snapshots import environment_spec_from_json, environment_spec_to_json

    run_dir = tmp_path / "ippo"
    first = command_line("--agent", "ippo", "--env", "mpe/simple_spread_v3", "--steps", 500, "--replay", "local",
                         "--config", "batch_size=4", "--run-dir", run_dir)
    assert first.returncode == 0, first.stderr[-3000:]
    resumed = command_line("--resume", run_dir, "--steps", 750)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = summary_line(resumed.stdout)
    assert summary["env_steps"] == 750 and summary["learner_steps"] > 0, summary
    assert json.loads((run_dir / "resumed.json").read_text())["step"] == 500
    team = csv_column(run_dir / "actor.csv", "episode_return")
    agents = [csv_column(run_dir / "actor.csv", f"episode_return/agent_{index}") for index in range(3)]
    assert len(team) == 30 and np.allclose(team, np.sum(agents, axis=0), atol=1e-3)
    assert (run_dir / "learning_curve.png").stat().st_size > 1000  # the team's curve and each agent's
    # The summary carries each agent's average beside the team's (the last 20 episodes, across the resume).
    window = summary["return_window"]
    per_agent = [summary[f"average_return_last_{window}/agent_{index}"] for index in range(3)]
    assert np.isclose(per_agent[0], np.mean(agents[0][-window:]), atol=0.02), summary
    assert np.isclose(sum(per_agent), summary[f"average_return_last_{window}"], atol=0.05), summary

    gif = tmp_path / "spread.gif"
    played = command_line(run_dir, "--episodes", 2, "--video", gif, module="launch.cli.evaluate")
    assert played.returncode == 0, played.stderr[-3000:]
    result = summary_line(played.stdout)
    assert result["step"] == 750 and len(result["returns"]) == 2 and result["frames"] == 26, result
    assert set(result["mean_agent_returns"]) == {"agent_0", "agent_1", "agent_2"}
    assert np.isclose(sum(result["mean_agent_returns"].values()), result["mean_return"], atol=1e-3)
    assert gif.stat().st_size > 10_000

    # The snapshot's spec keeps each agent's AgentObservation (observation, active) through JSON.
    spec = make_environment_spec(fake_multiagent_environment(0))
    restored = environment_spec_from_json(json.loads(json.dumps(environment_spec_to_json(spec))))
    assert repr(restored) == repr(spec) and isinstance(restored.observations["a"], AgentObservation)
    # A snapshot played on the other MPE task is refused, naming the agents of each.
    wrong = command_line(run_dir, "--episodes", 1, "--env", "mpe/simple_adversary_v3", module="launch.cli.evaluate")
    assert wrong.returncode == 2 and "was trained on agents ('agent_0', 'agent_1', 'agent_2')" in wrong.stderr


def test_central_inference_serves_every_agent_of_every_actor_the_actions_of_local_inference():
    """Three actors' multi-agent observations go to one InferenceServer: each batch is one call of IPPO's policy
    for every agent of every actor in it, and each actor gets exactly what a GenericActor with its key chooses."""
    import threading

    from acmelike.actors import GenericActor
    from acmelike.actors.inference import InferenceClientActor, InferenceServer

    environment = fake_multiagent_environment(0)
    networks = make_networks(make_environment_spec(environment), IPPOConfig(hidden_sizes=(8,)))

    class Fixed:
        params = networks.init(jax.random.PRNGKey(0))

        def update(self, wait=False):
            pass

    policy = multiagent_categorical_core(networks, greedy=False)

    def act(actor, seed):
        environment = fake_multiagent_environment(seed)
        actions = []
        for _ in range(3):  # episodes of 6 steps, agents leaving after 3 and 5
            timestep = environment.reset()
            actor.observe_first(timestep)
            while not timestep.last():
                action = actor.select_action(timestep.observation)
                actions.append([int(action[agent]) for agent in IDS])
                timestep = environment.step(action)
                actor.observe(action, timestep)
        return actions

    keys = [jax.random.PRNGKey(10 + index) for index in range(3)]
    local = [act(GenericActor(policy, key, Fixed()), index) for index, key in enumerate(keys)]
    server = InferenceServer(policy, Fixed(), max_batch_size=3, timeout_s=0.05)
    server.start()
    central = [None] * 3

    def client(index):
        central[index] = act(InferenceClientActor(server, index, keys[index]), index)

    threads = [threading.Thread(target=client, args=(index,)) for index in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        server.stop()
    assert central == local
    assert max(server.batch_sizes) > 1, "some batches served several actors at once"
    assert len({action for episode in local for step in episode for action in step}) > 1
