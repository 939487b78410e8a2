from gomoku_archive.web.ops.throttle import SignInThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_five_wrong_tokens_a_minute_then_wait() -> None:
    clock = Clock()
    throttle = SignInThrottle(clock=clock)
    for _ in range(5):
        assert throttle.retry_after("10.0.0.1") is None
        throttle.failed("10.0.0.1")
        clock.now += 1
    assert throttle.retry_after("10.0.0.1") == 55.0  # the first failure leaves the window then
    assert throttle.retry_after("10.0.0.2") is None, "another client is not slowed down"
    clock.now += 55
    assert throttle.retry_after("10.0.0.1") is None


def test_old_failures_do_not_count() -> None:
    clock = Clock()
    throttle = SignInThrottle(clock=clock)
    for _ in range(20):
        throttle.failed("c")
        clock.now += 13  # fewer than five in any minute
        assert throttle.retry_after("c") is None


def test_memory_is_bounded() -> None:
    clock = Clock()
    throttle = SignInThrottle(clock=clock, max_clients=3)
    for client in "abcd":
        throttle.failed(client)
    assert len(throttle._failures) == 3
    assert "a" not in throttle._failures
