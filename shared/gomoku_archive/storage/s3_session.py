"""boto3 sessions whose credential fetches cannot stall, and the thread presigned URLs are made
on. With IRSA or EKS Pod Identity, boto3 fetches credentials over the network (STS, the
container endpoint, the instance metadata service) when a client is made or a URL signed, and
again before they expire; botocore's own bounds for STS are 60 s reads and up to 5 tries."""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import ContainerProvider, InstanceMetadataProvider
from botocore.httpsession import URLLib3Session
from botocore.utils import ContainerMetadataFetcher

CREDENTIAL_CONNECT_SECONDS = 1.0
CREDENTIAL_READ_SECONDS = 2.0
CREDENTIAL_ATTEMPTS = 2
"""Each credential fetch from STS or the container endpoint: connect and read timeouts, and
tries in all. botocore's own for STS are 60 s reads and up to 5 tries: a stand-in STS that
accepted and never answered held a presign for minutes (4.1 s with these, measured)."""
CREDENTIAL_RETRY_PAUSE_SECONDS = 0.2
"""The container endpoint's pause between its tries (botocore's: 1 s)."""
IMDS_TIMEOUT_SECONDS = 1.0
IMDS_ATTEMPTS = 1
"""The instance metadata service, on the node itself, answers in milliseconds: botocore's own
values, pinned here so that no environment or config file can stretch them."""


def bounded_session() -> boto3.session.Session:
    """A boto3 session with boto3's standard credential chain, each network fetch of
    credentials bounded: STS (web identity, assumed roles) by the session's default client
    config, which botocore merges into the STS clients it makes for the chain
    (``AWS_ENDPOINT_URL_STS`` and ``AWS_STS_REGIONAL_ENDPOINTS`` still apply); the container
    endpoint (ECS, EKS Pod Identity) by a fetcher of ours in botocore's place; the instance
    metadata service by its two config variables (``IMDS_*``). An S3 client's own config
    still rules its S3 calls."""
    core = botocore.session.get_session()
    core.set_default_client_config(
        Config(
            connect_timeout=CREDENTIAL_CONNECT_SECONDS,
            read_timeout=CREDENTIAL_READ_SECONDS,
            retries={"total_max_attempts": CREDENTIAL_ATTEMPTS, "mode": "standard"},
        )
    )
    core.set_config_variable("metadata_service_timeout", IMDS_TIMEOUT_SECONDS)
    core.set_config_variable("metadata_service_num_attempts", IMDS_ATTEMPTS)
    fetcher = ContainerMetadataFetcher(
        session=URLLib3Session(timeout=(CREDENTIAL_CONNECT_SECONDS, CREDENTIAL_READ_SECONDS))
    )
    # botocore reads these per fetch; they have no constructor argument.
    fetcher.RETRY_ATTEMPTS = CREDENTIAL_ATTEMPTS
    fetcher.SLEEP_TIME = CREDENTIAL_RETRY_PAUSE_SECONDS
    resolver = core.get_component("credential_provider")
    resolver.remove(ContainerProvider.METHOD)
    # Its place in the chain: right before the instance role, as botocore puts it.
    resolver.insert_before(InstanceMetadataProvider.METHOD, ContainerProvider(fetcher=fetcher))
    return boto3.session.Session(botocore_session=core)


class Signer:
    """One daemon thread that presigns URLs. A daemon, unlike the threads of an executor
    (which the interpreter joins at exit): a credential fetch stuck on a source that does not
    answer must never hold the process when it stops."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[
            tuple[concurrent.futures.Future[str], Callable[[], str]] | None
        ] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="s3-presign", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], str]) -> concurrent.futures.Future[str]:
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._calls.put((future, fn))
        return future

    def close(self) -> None:
        self._calls.put(None)  # not joined: see the class's docstring

    def _run(self) -> None:
        while (call := self._calls.get()) is not None:
            future, fn = call
            if not future.set_running_or_notify_cancel():
                continue  # its caller stopped waiting before it came up
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the caller, whatever it is
                future.set_exception(exc)
