"""Watch a trained policy: run a run's snapshot for some episodes, print the returns, optionally save a video.

    python -m launch.cli.evaluate runs/dqn --episodes 10
    python -m launch.cli.evaluate runs/dqn --episodes 5 --video cartpole.gif

RUN_DIR may also be a `snapshots/` folder or one snapshot. The environment is the one the run trained on (its id
is in the snapshot), rebuilt with gymnasium, PettingZoo for `mpe/...` or the Control Suite for `dm_control/...`
(whose frames MuJoCo renders offscreen: acmelike.environments.control_suite says what a machine without a display
needs); the policy is the agent's evaluation policy (e.g. greedy for DQN). A multi-agent run's returns are the
team's (the sum over agents), and the result also holds each agent's mean return. A run that repeated actions
(`--action-repeat K`) is evaluated repeating them K times, as its snapshot records; its video still holds a frame
for every environment step. Nothing of the training code path (learner, replay, Launchpad) is built.
"""

import argparse
import json
import os
import sys
from typing import Any, Callable, List, Optional, Tuple

import dm_env
import gymnasium
import numpy as np
from dm_env import specs

from acmelike.checkpointing import CheckpointError
from acmelike.environments import CONTROL_SUITE_PREFIX, make_control_suite_environment, render_frame
from acmelike.loggers import NoOpLogger
from acmelike.specs import make_environment_spec
from acmelike.wrappers import EnvironmentWrapper, check_environment_id_from_file, check_gymnasium_id, repeat_actions
from acmelike.wrappers.gymnasium_adapter import GymnasiumToDmEnv
from acmelike.wrappers.pettingzoo_adapter import MPE_PREFIX, agent_ids, make_pettingzoo_environment
from environment_loops import EnvironmentLoop
from launch.cli import description
from launch.lifecycle.snapshots import load_snapshot


ReadFrame = Callable[[dm_env.Environment], np.ndarray]  # an environment's current rgb frame, [H, W, 3] uint8


class FrameRecorder(EnvironmentWrapper):
    """Keeps the rgb frame after the wrapped environment's reset and after each of its steps, while `recording`,
    read by `frame` (the one `make_environment` gives with the environment, e.g. `render_frame` for a Control Suite
    task). A wrapper, not a loop observer, so that beneath an `ActionRepeatWrapper` it films every environment
    step of a decision, not only the last."""

    def __init__(self, environment: dm_env.Environment, frame: ReadFrame):
        super().__init__(environment)
        self._frame = frame
        self.frames: List[np.ndarray] = []
        self.recording = True

    def reset(self) -> dm_env.TimeStep:
        timestep = self._environment.reset()
        self._keep()
        return timestep

    def step(self, action) -> dm_env.TimeStep:
        timestep = self._environment.step(action)
        self._keep()
        return timestep

    def _keep(self) -> None:
        if self.recording:
            self.frames.append(self._frame(self._environment))


def write_video(frames: List[np.ndarray], path: str, fps: int = 30) -> None:
    """Writes rgb frames ([H, W, 3] uint8) as a GIF (Pillow) or, for .mp4, with imageio's ffmpeg plugin."""
    if not frames:
        raise ValueError("No frames to write.")
    extension = os.path.splitext(path)[1].lower()
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    if extension == ".gif":
        from PIL import Image

        images = [Image.fromarray(np.asarray(frame, np.uint8)) for frame in frames]
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    elif extension == ".mp4":
        try:
            import imageio.v3 as iio

            iio.imwrite(path, np.stack(frames).astype(np.uint8), fps=fps, plugin="FFMPEG")
        except (ImportError, ValueError, RuntimeError) as error:
            raise RuntimeError(
                f"Writing {path} needs imageio with its ffmpeg plugin (pip install imageio imageio-ffmpeg): {error}. "
                "A .gif needs only Pillow."
            ) from error
    else:
        raise ValueError(f"--video {path}: the file must end in .gif or .mp4.")


def make_environment(environment_id: str, seed: int, render: bool) -> Tuple[dm_env.Environment, ReadFrame]:
    """The run's environment as the agents see it (float32), and how its frames are read (rendered as rgb only if
    `render`): gymnasium's, PettingZoo's for an `mpe/...` id, or the Control Suite's for `dm_control/...` (which
    renders on demand)."""
    if environment_id.startswith(CONTROL_SUITE_PREFIX):
        return make_control_suite_environment(environment_id, seed), render_frame
    if not environment_id.startswith(MPE_PREFIX):
        check_gymnasium_id(environment_id)
    if render:  # pygame renders off-screen; without these SDL looks for a display and an audio device
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    render_mode = "rgb_array" if render else None
    if environment_id.startswith(MPE_PREFIX):
        return (make_pettingzoo_environment(environment_id, seed, render_mode=render_mode),
                lambda environment: np.asarray(environment.pettingzoo_env.render()))
    env = GymnasiumToDmEnv(gymnasium.make(environment_id, render_mode=render_mode), seed=seed, single_precision=True)
    return env, lambda environment: np.asarray(environment.gymnasium_env.render())


def evaluate(
    path: str, *, episodes: int, seed: int = 0, video: Optional[str] = None, environment: Optional[str] = None
) -> dict:
    """Runs the snapshot at `path` for `episodes` episodes; returns {"returns", "mean_return", "snapshot", ...}.

    With `video`, the first episode's frames are written there.
    """
    snapshot = load_snapshot(path)
    if environment is None:
        environment = snapshot.environment
        if environment is None:
            raise ValueError(f"The snapshot {snapshot.path} names no environment: pass --env.")
        check_environment_id_from_file(environment, f"The snapshot {snapshot.path}")
    env, frame = make_environment(environment, seed, render=video is not None)
    recorder = FrameRecorder(env, frame) if video is not None else None
    # The policy decided every K steps in training, so it does here; the recorder beneath films every step.
    env = repeat_actions(env if recorder is None else recorder, snapshot.action_repeat)
    _check_spec(snapshot, make_environment_spec(env), environment)
    actor = snapshot.make_actor(seed)
    episode_results = []
    for episode in range(episodes):
        if recorder is not None:
            recorder.recording = episode == 0  # the video is the first episode
        loop = EnvironmentLoop(env, actor, logger=NoOpLogger(), should_update=False)
        episode_results.append(loop.run_episode())
    env.close()
    returns = [float(episode_result["episode_return"]) for episode_result in episode_results]
    result: dict[str, Any] = {
        "snapshot": snapshot.path, "agent": snapshot.agent, "env": environment, "step": snapshot.step,
        "returns": returns, "mean_return": float(np.mean(returns)),
        **({"action_repeat": snapshot.action_repeat} if snapshot.action_repeat > 1 else {}),
    }
    agent_columns = sorted(key for key in episode_results[0] if key.startswith("episode_return/"))
    if agent_columns:  # a multi-agent run: each agent's mean return beside the team's
        result["mean_agent_returns"] = {
            column.split("/", 1)[1]: float(np.mean([episode_result[column] for episode_result in episode_results]))
            for column in agent_columns
        }
    if video is not None:
        write_video(recorder.frames, video)
        result.update(video=video, frames=len(recorder.frames), frame_shape=list(recorder.frames[0].shape))
    return result


def _check_spec(snapshot, spec, environment: str) -> None:
    """The snapshot's networks fit only the spec they were built for: a ValueError naming both if not (for a
    multi-agent spec, the agent ids, then each agent's observation and action)."""
    saved_spec = snapshot.environment_spec
    if isinstance(saved_spec.actions, dict) or isinstance(spec.actions, dict):
        saved_ids = agent_ids(saved_spec) if isinstance(saved_spec.actions, dict) else None
        actual_ids = agent_ids(spec) if isinstance(spec.actions, dict) else None
        if saved_ids != actual_ids:
            raise ValueError(
                f"The snapshot {snapshot.path} was trained on agents {saved_ids}, but {environment} has {actual_ids}."
            )
        # An agent's observation spec is an AgentObservation (observation, active): a plain tuple once saved.
        pairs = [(f"observations of agent {agent!r}", saved_spec.observations[agent][0], spec.observations[agent][0])
                 for agent in saved_ids]
        pairs += [(f"actions of agent {agent!r}", saved_spec.actions[agent], spec.actions[agent])
                  for agent in saved_ids]
    else:
        pairs = [("observations", saved_spec.observations, spec.observations),
                 ("actions", saved_spec.actions, spec.actions)]
    for what, saved, actual in pairs:
        if _built_for(saved) != _built_for(actual):
            raise ValueError(
                f"The snapshot {snapshot.path} was trained on {what} {saved!r}, but {environment} has {actual!r}."
            )


def _built_for(spec) -> Optional[Tuple[Tuple[int, ...], Optional[int]]]:
    """What networks built for `spec` depend on: an array spec's shape and, for a discrete one, its number of
    values; None for a nest of specs, which is not compared."""
    if not isinstance(spec, specs.Array):
        return None
    return spec.shape, spec.num_values if isinstance(spec, specs.DiscreteArray) else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m launch.cli.evaluate", description=description(__doc__))
    parser.add_argument("run_dir", help="a run directory (its latest snapshot), a snapshots/ folder or a snapshot")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="seeds the environment and the policy's randomness")
    parser.add_argument("--video", default=None, help="write the first episode's frames to this .gif (or .mp4)")
    parser.add_argument("--env", default=None, help="override the environment id stored in the snapshot")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be >= 1, got {args.episodes}")
    if args.video is not None and os.path.splitext(args.video)[1].lower() not in (".gif", ".mp4"):
        parser.error(f"--video {args.video}: the file must end in .gif or .mp4")
    try:
        result = evaluate(args.run_dir, episodes=args.episodes, seed=args.seed, video=args.video, environment=args.env)
    except (CheckpointError, ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    for episode, value in enumerate(result["returns"]):
        print(f"episode {episode}: return {value:g}", flush=True)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
