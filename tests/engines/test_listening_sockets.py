"""What a run exposes: every TCP socket a run's processes listen on is on loopback (or on --bind-address), read from
/proc/net/tcp{,6} while the run runs; nothing here connects anywhere. Also the library that moves a wildcard bind
to the bind address (launch/engines/bind_address.c), on sockets of a child Python, and its build failing.

Each run is `python -m launch` in a subprocess (tests/program_launcher.py), DQN on CartPole, a few thousand steps.
"""

import ipaddress
import os
import subprocess
import sys
import time

import psutil
import pytest
from program_launcher import Launcher, last_json_line
from stack import require, require_installed

from launch.engines import bind_address


def _address(hex_address: str):
    """An address:port field of /proc/net/tcp{,6}: 32-bit words in host (little-endian) order, then the port."""
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(raw), int(port, 16)


def listening_sockets(pids) -> set:
    """{(address, port, command)} of the TCP sockets in LISTEN state that processes `pids` hold."""
    owners = {}
    for pid in pids:
        try:
            command = " ".join(psutil.Process(pid).cmdline())[:120]
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    owners[link[len("socket:["):-1]] = command
        except (OSError, psutil.Error):
            continue  # a process that ended, or a descriptor closed while read
    found = set()
    for table in ("tcp", "tcp6"):
        with open(f"/proc/net/{table}") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in owners:  # 0A: LISTEN; column 9: the socket's inode
                    found.add(_address(fields[1]) + (owners[fields[9]],))
    return found


def _ipv4(address) -> ipaddress.IPv4Address:
    """An IPv4 address, or the IPv4 address an IPv4-mapped IPv6 address (a dual-stack socket's) stands for."""
    return address if address.version == 4 else address.ipv4_mapped or address


def _not_loopback(sockets) -> list:
    return sorted(f"{address}:{port} ({command})" for address, port, command in sockets
                  if not _ipv4(address).is_loopback)


def _run_and_watch(launcher, timeout: float) -> set:
    """Every socket the launcher's process tree listens on while it runs (sampled once a second), after it ended."""
    seen, last = set(), [0.0]

    def ended():
        if time.time() - last[0] >= 1.0:
            last[0] = time.time()
            try:
                pids = [launcher.process.pid] + [p.pid for p in psutil.Process(launcher.process.pid).children(True)]
            except psutil.NoSuchProcess:
                pids = []
            seen.update(listening_sockets(pids))
        return launcher.process.poll() is not None

    launcher.wait_until(ended, timeout, "the run's end")
    assert launcher.wait(30) == 0, launcher.output[-3000:] + launcher.errors[-3000:]
    return seen


def _check_finished(launcher, steps: int) -> dict:
    summary = last_json_line(launcher.output)
    assert summary["env_steps"] >= steps and not summary.get("failed") and not summary["interrupted"], summary
    return summary


@pytest.mark.classic
@pytest.mark.parametrize("launch", ["local_mp", "local_mt"])
def test_a_launchpad_program_listens_on_loopback_only(launch, tmp_path):
    """local_mp: a process per node, started with the library in their environment; local_mt: every node's server
    in the launcher's own process, which `python -m launch` restarted with the library loaded."""
    require("launchpad")
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--launch", launch, "--actors", 1, "--steps",
                        2000, command_line=True, separate_stderr=True, run_dir=tmp_path)
    sockets = _run_and_watch(launcher, 300)
    _check_finished(launcher, 2000)
    # replay (Reverb), counter, learner, actor_0, steps_limiter: each node's server
    assert len({port for _, port, _ in sockets}) >= 5, sockets
    assert _not_loopback(sockets) == []
    assert launcher.left_behind() == []


@pytest.mark.alone  # Ray's port allocation races under load (tests/engines/test_ray.py)
def test_a_ray_program_listens_on_loopback_only(tmp_path):
    require_installed("ray")  # the program imports it, not this process
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--launch", "ray", "--actors", 1, "--steps", 1200,
                        command_line=True, separate_stderr=True, run_dir=tmp_path)
    sockets = _run_and_watch(launcher, 300)
    _check_finished(launcher, 1200)
    # Ray's own daemons (gcs, raylet, agents) and its workers, among them the replay node
    assert any("gcs_server" in command for _, _, command in sockets), sockets
    assert sum(command.startswith("ray::") for _, _, command in sockets) >= 3, sockets
    assert _not_loopback(sockets) == []
    assert launcher.left_behind() == []


@pytest.mark.classic
def test_a_single_process_run_with_reverb_listens_on_loopback_only(tmp_path):
    require("reverb")
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--replay", "reverb", "--steps", 2000,
                        command_line=True, separate_stderr=True, run_dir=tmp_path)
    sockets = _run_and_watch(launcher, 300)
    _check_finished(launcher, 2000)
    # The server is the launcher's own: loopback shows `python -m launch` restarted itself with the library loaded.
    assert sockets, "the embedded Reverb server was never seen listening"
    assert _not_loopback(sockets) == []


@pytest.mark.classic
def test_bind_address_given_is_the_address_the_servers_listen_on(tmp_path):
    require("reverb")
    launcher = Launcher("--agent", "dqn", "--env", "CartPole-v1", "--replay", "reverb", "--steps", 1500,
                        "--bind-address", "127.0.0.2", command_line=True, separate_stderr=True, run_dir=tmp_path)
    sockets = _run_and_watch(launcher, 300)
    _check_finished(launcher, 1500)
    assert sockets and {str(_ipv4(address)) for address, _, _ in sockets} == {"127.0.0.2"}, sockets


_BIND = """
import json, socket
found = {}
for name, family, host, only_ipv6 in (("ipv4", socket.AF_INET, "0.0.0.0", None), ("dual", socket.AF_INET6, "::", 0),
                                      ("ipv6_only", socket.AF_INET6, "::", 1),
                                      ("named", socket.AF_INET, "127.0.0.3", None)):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        if only_ipv6 is not None:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, only_ipv6)
        try:
            s.bind((host, 0))
            found[name] = s.getsockname()[0]
        except OSError as error:
            found[name] = error.strerror
print(json.dumps(found))
"""


@pytest.mark.parametrize("address, expected", [
    ("127.0.0.1", {"ipv4": "127.0.0.1", "dual": "::ffff:127.0.0.1", "ipv6_only": "::1", "named": "127.0.0.3"}),
    ("127.0.0.2", {"ipv4": "127.0.0.2", "dual": "::ffff:127.0.0.2", "ipv6_only": "::1", "named": "127.0.0.3"}),
    ("198.51.100.77", {"ipv4": "Cannot assign requested address", "dual": "Cannot assign requested address",
                   "ipv6_only": "Cannot assign requested address", "named": "127.0.0.3"}),  # not this machine's
    ("0.0.0.0", {"ipv4": "0.0.0.0", "dual": "::", "ipv6_only": "::", "named": "127.0.0.3"}),
    (None, {"ipv4": "0.0.0.0", "dual": "::", "ipv6_only": "::", "named": "127.0.0.3"}),  # unset: nothing changes
], ids=["loopback", "another-loopback", "not-here", "every-interface", "unset"])
def test_the_library_moves_wildcard_binds_to_the_bind_address(address, expected):
    import json

    environment = {**os.environ, "LD_PRELOAD": bind_address.library()}
    environment.pop(bind_address.ENVIRONMENT_VARIABLE, None)
    if address is not None:
        environment[bind_address.ENVIRONMENT_VARIABLE] = address
    result = subprocess.run([sys.executable, "-c", _BIND], env=environment, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected


@pytest.mark.usefixtures("packages_present")
def test_a_run_that_needs_the_library_is_refused_when_it_cannot_be_built(tmp_path, monkeypatch, capsys):
    """Exit 2 before anything is written, saying how to fix it; --bind-address 0.0.0.0 needs no library."""
    from launch.cli.train import plan

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(tmp_path / "no-compiler"))
    command = ["--agent", "dqn", "--env", "CartPole-v1", "--launch", "local_mp", "--run-dir", str(tmp_path / "run")]
    with pytest.raises(SystemExit) as exit_:
        plan(command)
    assert exit_.value.code == 2
    message = capsys.readouterr().err
    assert "install a C compiler" in message and "--bind-address 0.0.0.0" in message, message
    assert not (tmp_path / "run").exists()
    assert plan(command + ["--bind-address", "0.0.0.0"]).options.bind_address == "0.0.0.0"
