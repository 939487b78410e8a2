"""Debian's nginx as the downloads' reference: started by the benchmark on a free loopback port
with its own configuration, pid, log and temp paths under the section's workdir, in the
foreground as one process (``master_process off``: one process serves, as ours does), and
stopped by its pid. The system's nginx service is never touched."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from .support import free_port, wait_listening

CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    types {{ application/gzip gz; }}
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
"""


@contextlib.contextmanager
def nginx_serving(root: Path, workdir: Path) -> Iterator[int]:
    """Serve the files under ``root``; yields the port."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        raise RuntimeError("nginx is not installed (apt-get install -y nginx; deploy/test.sh does)")
    home = workdir / "nginx"
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = home / "nginx.conf"
    conf.write_text(CONFIG.format(dir=home, port=port, root=root))
    log = (home / "stderr.log").open("wb")
    proc = subprocess.Popen(
        [binary, "-p", str(home), "-c", str(conf), "-e", str(home / "error.log")],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_listening(port)
        yield port
    finally:
        proc.send_signal(signal.SIGQUIT)  # nginx's graceful stop
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
