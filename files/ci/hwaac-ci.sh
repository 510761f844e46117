#!/usr/bin/env bash
# The steps of hwaac's fabric pipeline, shared by the GitHub Actions workflow and the GitLab CI file beside this
# script, and runnable by hand from the root of a fabric repository (docs/ci.md):
#
#   hwaac-ci.sh setup              install hwaac with pip (HWAAC_VERSION); terraform and node when missing
#   hwaac-ci.sh validate           hwaac validate inventory/$HWAAC_FABRIC
#   hwaac-ci.sh plan [--keep-going]  hwaac plan (device files, docs), then `terraform plan -out` of the fabric's
#                                  cdktn stack; --keep-going: a failed terraform plan is recorded for the comment
#   hwaac-ci.sh review             hwaac review against the target branch, with the terraform plan
#   hwaac-ci.sh comment            post or update the review as one pull/merge request comment, then exit with
#                                  the verdict: 3 when the review refused the change, 1 when terraform plan failed
#   hwaac-ci.sh apply              terraform plan (refreshed) and apply of that saved plan
#   hwaac-ci.sh deploy             launch the AWX job template, wait for its job, fail when it fails
#
# Written under $HWAAC_CI_DIR (default build/hwaac-ci): the rendered files (render/), the review (review/), the
# provider's local mirror (terraform/), the saved terraform plan (tfplan) and its JSON, terraform's and AWX's
# output, the comment. Elsewhere, where cdktn and Terraform put them: the synthesized stack
# (cdktf/cdktf.out/stacks/<fabric>/ unless HWAAC_CDKTF_OUTDIR says otherwise) with terraform init's .terraform/
# and .terraform.lock.hcl and, when HWAAC_TF_BACKEND names a backend, backend_override.tf.json (Terraform reads
# override files only from the stack's folder); the stack's local state cdktf/state/ (HWAAC_TF_BACKEND unset or
# local); jsii's cache build/jsii-cache/; terraform and node from `setup` in HWAAC_BIN_DIR and HWAAC_NODE_PREFIX.
# Temporary files (API answers, the comment and AWX launch bodies, which may hold HWAAC_AWX_EXTRA_VARS) live in one
# private folder under $TMPDIR, removed however the script ends. Tokens come from the environment only; they reach
# curl through a file descriptor (never its command line) and are never printed: do not add `set -x`.
# Exit status: 0 ok; 1 a step failed (invalid intent, terraform, AWX job); 2 bad configuration (a variable missing
# or invalid, an API refusing a request); 3 the review refused the change.
set -euo pipefail

CI_DIR=${HWAAC_CI_DIR:-build/hwaac-ci}
PYTHON=${HWAAC_PYTHON:-python3}
MARKER_PREFIX="<!-- hwaac-review:"
GITHUB_COMMENT_LIMIT=65536  # GitHub refuses an issue comment body over 65,536 characters

HDR=()  # the request headers of `http`
TMP=""  # the script's temporary folder (made by main); `scratch` makes the temporary files in it

scratch() { mktemp "$@" -p "$TMP"; }  # scratch [-d]: a new temporary file (folder) in $TMP
cleanup() { [[ -z "$TMP" ]] || rm -rf -- "$TMP"; }

marker() { echo "$MARKER_PREFIX $HWAAC_FABRIC -->"; }  # the first line of our comment: found again by it
log() { echo "hwaac-ci: $*" >&2; }
fail() { local rc=$1; shift; log "$*"; exit "$rc"; }  # fail RC MESSAGE

need() { [[ -n "${!1:-}" ]] || fail 2 "$1 is not set: $2"; }  # need NAME WHAT: NAME must be set, not empty

fabric_dir() {  # the fabric's folder, inventory/$HWAAC_FABRIC; fails naming the valid folders
    local valid
    valid=$(find inventory -mindepth 2 -maxdepth 3 -name fabric.yml -printf '%h\n' 2>/dev/null |
            sed 's|^inventory/||' | sort | paste -sd, - || true)
    need HWAAC_FABRIC "the fabric's folder under inventory/ (one of: ${valid:-none found})"
    [[ -f "inventory/$HWAAC_FABRIC/fabric.yml" ]] ||
        fail 2 "HWAAC_FABRIC=$HWAAC_FABRIC: no inventory/$HWAAC_FABRIC/fabric.yml here ($PWD); valid: ${valid:-none}"
    echo "inventory/$HWAAC_FABRIC"
}

platform() {  # github, gitlab or local
    if [[ "${GITHUB_ACTIONS:-}" == "true" ]]; then echo github
    elif [[ "${GITLAB_CI:-}" == "true" ]]; then echo gitlab
    else echo local; fi
}

# --- HTTP ------------------------------------------------------------------------------------------------------

# http METHOD URL OUT [BODY_FILE]: the request with the headers in the array HDR (which may hold a token: curl
# reads them from a file descriptor), the response body into OUT; fails (2) on a transport error or HTTP >= 400.
http() {
    local method=$1 url=$2 out=$3 body=${4:-} status
    local args=(--silent --show-error --max-time "${HWAAC_HTTP_TIMEOUT:-60}" -X "$method" -o "$out"
                -w '%{http_code}')
    if [[ "$method" == GET ]]; then
        args+=(--retry 3 --retry-connrefused)
    fi
    if [[ -n "$body" ]]; then
        args+=(-H 'Content-Type: application/json' --data-binary "@$body")
    fi
    # the headers through a pipe curl reads (-H @file), made on curl's own command line so it is still open
    if ! status=$(curl "${args[@]}" -H @<(printf '%s\n' "${HDR[@]}") "$url"); then
        fail 2 "$method $url: no answer"
    fi
    if (( status >= 400 )); then
        fail 2 "$method $url: HTTP $status: $(head -c 600 "$out")"
    fi
    echo "$status"
}

json() {  # json FILE EXPR [ARG...]: EXPR (Python over the document `d` and the list `a` of ARGs), as text or JSON
    "$PYTHON" - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"d": d, "a": sys.argv[3:]})
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# --- setup -----------------------------------------------------------------------------------------------------

fetch_verified() {  # fetch_verified URL SUMS_URL NAME OUT: download URL to OUT, checked against NAME in SUMS_URL
    local url=$1 sums=$2 name=$3 out=$4 want
    curl -fsSL --retry 3 -o "$out" "$url"
    want=$(curl -fsSL --retry 3 "$sums" | awk -v n="$name" '$2 == n || $2 == "*" n {print $1}')
    [[ -n "$want" ]] || fail 1 "$sums lists no checksum for $name"
    echo "$want  $out" | sha256sum -c --quiet - || fail 1 "$url: checksum mismatch"
}

cmd_setup() {
    local have want spec tmp tool
    want=${HWAAC_VERSION:-}
    spec=${HWAAC_PIP_SPEC:-}
    have=$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("hwaac"))' 2>/dev/null || true)
    if [[ -z "$spec" ]]; then
        need HWAAC_VERSION "the hwaac release to install with pip (e.g. 0.1.0), or HWAAC_PIP_SPEC"
        spec="hwaac==$want"
    fi
    if [[ -n "$have" && -z "${HWAAC_PIP_SPEC:-}" && "$have" == "$want" ]]; then
        log "hwaac $have is installed"
    else
        log "installing $spec (found: ${have:-none})"
        "$PYTHON" -m pip install --quiet --disable-pip-version-check "$spec"
    fi
    command -v hwaac >/dev/null || fail 2 "hwaac is not on PATH after installing it (PATH=$PATH)"
    for tool in git curl; do command -v "$tool" >/dev/null || fail 2 "$tool is not on PATH"; done
    tmp=$(scratch -d)
    if ! command -v terraform >/dev/null; then
        need TERRAFORM_VERSION "terraform is not on PATH: the Terraform release to install (e.g. 1.11.4)"
        local tf="terraform_${TERRAFORM_VERSION}_linux_amd64.zip"
        local base="https://releases.hashicorp.com/terraform/$TERRAFORM_VERSION"
        fetch_verified "$base/$tf" "$base/terraform_${TERRAFORM_VERSION}_SHA256SUMS" "$tf" "$tmp/$tf"
        "$PYTHON" -m zipfile -e "$tmp/$tf" "$tmp/tf"
        install -m 0755 "$tmp/tf/terraform" "${HWAAC_BIN_DIR:-/usr/local/bin}/terraform"
    fi
    if ! node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
        need NODE_VERSION "node >= 20 is not on PATH (jsii runs the cdktn stack): the Node.js release to install"
        local nd="node-v${NODE_VERSION}-linux-x64"
        fetch_verified "https://nodejs.org/dist/v$NODE_VERSION/$nd.tar.xz" \
            "https://nodejs.org/dist/v$NODE_VERSION/SHASUMS256.txt" "$nd.tar.xz" "$tmp/$nd.tar.xz"
        tar -xJf "$tmp/$nd.tar.xz" -C "${HWAAC_NODE_PREFIX:-/usr/local}" --strip-components=1
    fi
    log "tools: $(terraform version | head -1), node $(node --version), $(git --version)"
}

# --- validate and plan -----------------------------------------------------------------------------------------

cmd_validate() {
    local intent
    intent=$(fabric_dir)
    hwaac validate "$intent"
}

synth() {  # synthesize the fabric's cdktn stack (cdktf/main.py); prints the stack's folder
    local out dir
    [[ -f cdktf/main.py ]] || fail 2 "no cdktf/main.py here ($PWD): copy the cdktn app of hwaac (cdktf/) into the repository"
    out=$(cd cdktf && HWAAC_FABRICS=$HWAAC_FABRIC "$PYTHON" main.py) || fail 1 "cdktn synth of $HWAAC_FABRIC failed"
    # main.py prints "<stack>: <outdir>/stacks/<stack>/cdk.tf.json"
    dir=$(printf '%s\n' "$out" | sed -n 's|^[^:]*: \(.*\)/cdk\.tf\.json$|\1|p' | tail -1)
    [[ -d "$dir" ]] || fail 1 "cdktn synth printed no stack folder: $out"
    echo "$dir"
}

gitlab_state_defaults() {  # the GitLab-managed Terraform state of the project, unless TF_HTTP_ADDRESS says otherwise
    if [[ "$(platform)" == gitlab && "${HWAAC_TF_BACKEND:-}" == http && -z "${TF_HTTP_ADDRESS:-}" ]]; then
        export TF_HTTP_ADDRESS="$CI_API_V4_URL/projects/$CI_PROJECT_ID/terraform/state/hwaac-$HWAAC_FABRIC"
        export TF_HTTP_LOCK_ADDRESS="$TF_HTTP_ADDRESS/lock" TF_HTTP_UNLOCK_ADDRESS="$TF_HTTP_ADDRESS/lock"
        export TF_HTTP_LOCK_METHOD=POST TF_HTTP_UNLOCK_METHOD=DELETE TF_HTTP_USERNAME=gitlab-ci-token
        export TF_HTTP_PASSWORD="$CI_JOB_TOKEN" TF_HTTP_RETRY_WAIT_MIN=5
    fi
}

ci_abs() {  # $CI_DIR as an absolute path (terraform -chdir reads a relative one from the stack's folder)
    if [[ "$CI_DIR" == /* ]]; then echo "$CI_DIR"; else echo "$PWD/$CI_DIR"; fi
}

tf_init() {  # tf_init STACK: the provider from a local mirror, the backend HWAAC_TF_BACKEND; terraform init
    local stack=$1 line args=(init -input=false -no-color) rc_file
    hwaac terraform mirror -o "$CI_DIR/terraform" >/dev/null
    rc_file="$(ci_abs)/terraform/terraform.rc"
    export TF_CLI_CONFIG_FILE="$rc_file" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
    rm -f "$stack/backend_override.tf.json"
    case "${HWAAC_TF_BACKEND:-}" in
        "" | local) ;;  # the stack's own local state: cdktf/state/<stack>.tfstate
        *)
            gitlab_state_defaults
            # an override file replaces the stack's backend block (Terraform's override files, "terraform" block)
            printf '{"terraform": {"backend": {"%s": {}}}}\n' "$HWAAC_TF_BACKEND" >"$stack/backend_override.tf.json"
            while IFS= read -r line; do
                [[ -n "${line// /}" ]] && args+=("-backend-config=$line")
            done <<<"${HWAAC_TF_BACKEND_CONFIG:-}"
            ;;
    esac
    terraform -chdir="$stack" "${args[@]}" >"$CI_DIR/terraform-init.txt" 2>&1 ||
        { cat "$CI_DIR/terraform-init.txt" >&2; fail 1 "terraform init failed in $stack"; }
    grep -E "Installed|Reusing|Successfully configured|initialized" "$CI_DIR/terraform-init.txt" >&2 || true
}

no_state_in_ci() {  # in CI without a backend the state is lost with the job: say so (plan) or refuse (apply)
    [[ -z "${HWAAC_TF_BACKEND:-}" || "$HWAAC_TF_BACKEND" =~ ^[a-z0-9]+$ ]] ||
        fail 2 "HWAAC_TF_BACKEND=$HWAAC_TF_BACKEND: not a Terraform backend type (local, http, s3, gcs, ...)"
    if [[ "${CI:-}" == "true" && -z "${HWAAC_TF_BACKEND:-}" ]]; then
        local msg="HWAAC_TF_BACKEND is not set: the state would be the job's local file cdktf/state/, lost with the job"
        [[ "$1" == refuse ]] && fail 2 "$msg; set a backend (http, s3, ...: docs/ci.md), or local on a persistent runner"
        log "warning: $msg, so the plan starts from an empty state"
    fi
}

tf_plan() {  # tf_plan STACK TEXT: terraform plan -out=$CI_DIR/tfplan, its output into TEXT too; returns its status
    local rc=0
    rm -f "$CI_DIR/tfplan"
    terraform -chdir="$1" plan -input=false -no-color -lock-timeout="${HWAAC_TF_LOCK_TIMEOUT:-10m}" \
        -out="$(ci_abs)/tfplan" 2>&1 | tee "$2" || rc=${PIPESTATUS[0]}
    return "$rc"
}

cmd_plan() {
    local keep_going=false stack rc=0 intent
    [[ "${1:-}" == "--keep-going" ]] && keep_going=true
    intent=$(fabric_dir)
    mkdir -p "$CI_DIR"
    rm -f "$CI_DIR/tfplan.json" "$CI_DIR/terraform-plan.rc" "$CI_DIR/terraform-plan.txt"
    no_state_in_ci warn
    hwaac plan "$intent" -o "$CI_DIR/render" --no-progress
    stack=$(synth)
    tf_init "$stack"
    tf_plan "$stack" "$CI_DIR/terraform-plan.txt" || rc=$?
    echo "$rc" >"$CI_DIR/terraform-plan.rc"
    if (( rc == 0 )); then
        terraform -chdir="$stack" show -json "$(ci_abs)/tfplan" >"$CI_DIR/tfplan.json"
        log "terraform plan of $stack saved ($CI_DIR/tfplan, $CI_DIR/tfplan.json)"
    elif [[ "$keep_going" == true ]]; then
        log "terraform plan failed (exit $rc); the review goes on without it and the comment step fails the job"
    else
        fail 1 "terraform plan failed (exit $rc)"
    fi
}

# --- review and comment ----------------------------------------------------------------------------------------

base_rev() {  # the revision the pull/merge request is reviewed against, fetched when missing
    local branch rev
    case "$(platform)" in
        github) need GITHUB_BASE_REF "a pull_request event sets it (the target branch)"; branch=$GITHUB_BASE_REF ;;
        gitlab) need CI_MERGE_REQUEST_TARGET_BRANCH_NAME "a merge request pipeline sets it"
                branch=$CI_MERGE_REQUEST_TARGET_BRANCH_NAME ;;
        *) branch=${HWAAC_BASE_REF:-main} ;;
    esac
    if ! git rev-parse --verify -q "refs/remotes/origin/$branch^{commit}" >/dev/null; then
        git fetch --no-tags --quiet origin "+refs/heads/$branch:refs/remotes/origin/$branch" ||
            fail 2 "cannot fetch the target branch $branch from origin"
    fi
    rev="origin/$branch"
    # GitLab: a merge request pipeline runs on the source branch's head; its diff base (the merge base GitLab
    # shows the diff against) keeps changes made on the target branch since out of the review. GitHub checks
    # out the merge commit, which the target branch's head is the right base for.
    if [[ "$(platform)" == gitlab && -n "${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}" ]] &&
            git cat-file -e "$CI_MERGE_REQUEST_DIFF_BASE_SHA^{commit}" 2>/dev/null; then
        rev=$CI_MERGE_REQUEST_DIFF_BASE_SHA
    fi
    echo "$rev"
}

cmd_review() {
    local intent base rc=0 args extra=()
    intent=$(fabric_dir)
    base=$(base_rev)
    mkdir -p "$CI_DIR"
    rm -f "$CI_DIR/review.rc"
    args=(review "$intent" --base "$base" -o "$CI_DIR/review")
    if [[ -f "$CI_DIR/tfplan.json" ]]; then
        args+=(--terraform-plan "$CI_DIR/tfplan.json")
    fi
    read -r -a extra <<<"${HWAAC_REVIEW_ARGS:-}"
    hwaac "${args[@]}" "${extra[@]}" || rc=$?
    echo "$rc" >"$CI_DIR/review.rc"
    case $rc in
        0) log "reviewed against $base: $CI_DIR/review/review.md" ;;
        3) log "the review refuses this change (see $CI_DIR/review/review.md); the comment step fails the job" ;;
        *) fail "$rc" "hwaac review failed (exit $rc)" ;;
    esac
}

comment_body() {  # write the comment (marker, review.md, a failed terraform plan) as {"body": ...} to $1
    local payload=$1 review="$CI_DIR/review/review.md"
    [[ -f "$review" ]] || fail 2 "no $review: run \`hwaac-ci.sh review\` first"
    "$PYTHON" - "$review" "$CI_DIR/terraform-plan.rc" "$CI_DIR/terraform-plan.txt" "$payload" \
        "$(marker)" "$GITHUB_COMMENT_LIMIT" "$CI_DIR/comment.md" <<'EOF'
import json, pathlib, sys
review, rc_file, plan_txt, payload, marker, limit, copy = sys.argv[1:]
body = f"{marker}\n{pathlib.Path(review).read_text()}"
rc = pathlib.Path(rc_file)
if rc.exists() and rc.read_text().strip() != "0":
    tail = "\n".join(pathlib.Path(plan_txt).read_text(errors="replace").splitlines()[-60:])
    body += (f"\n\n### terraform plan failed (exit {rc.read_text().strip()})\n\n"
             f"<details><summary>its last lines</summary>\n\n```\n{tail}\n```\n</details>\n")
if len(body) > int(limit):
    note = "\n\n... cut to fit the comment; the whole review is in the job's artifacts (review.md).\n"
    body = body[: int(limit) - len(note)] + note
pathlib.Path(copy).write_text(body)
json.dump({"body": body}, open(payload, "w"))
EOF
}

find_comment() {  # find_comment LIST_URL: the id of the first comment/note whose body starts with our marker
    local url=$1 page=1 out n id
    out=$(scratch)
    while :; do
        http GET "${url}per_page=100&page=$page" "$out" >/dev/null
        id=$(json "$out" "next((str(c['id']) for c in d if c.get('body', '').startswith(a[0])), '')" "$(marker)")
        n=$(json "$out" "len(d)")
        if [[ -n "$id" ]] || (( n < 100 )); then
            break
        fi
        page=$((page + 1))
    done
    echo "$id"
}

post_github() {  # post_github PAYLOAD
    local payload=$1 number repo api out id
    need GITHUB_TOKEN "the workflow's token (secrets.GITHUB_TOKEN, permission pull-requests: write)"
    need GITHUB_EVENT_PATH "GitHub Actions sets it"
    number=$(json "$GITHUB_EVENT_PATH" "str((d.get('pull_request') or {}).get('number', ''))")
    if [[ -z "$number" ]]; then
        log "not a pull_request event: nothing to comment on; the comment is in $CI_DIR/comment.md"
        return
    fi
    repo=$GITHUB_REPOSITORY api=${GITHUB_API_URL:-https://api.github.com}
    HDR=("Authorization: Bearer $GITHUB_TOKEN" "Accept: application/vnd.github+json"
         "X-GitHub-Api-Version: 2022-11-28")
    out=$(scratch)
    id=$(find_comment "$api/repos/$repo/issues/$number/comments?")
    if [[ -n "$id" ]]; then
        http PATCH "$api/repos/$repo/issues/comments/$id" "$out" "$payload" >/dev/null
        log "updated the review comment $(json "$out" "d.get('html_url', '')") on pull request #$number"
    else
        http POST "$api/repos/$repo/issues/$number/comments" "$out" "$payload" >/dev/null
        log "posted the review comment $(json "$out" "d.get('html_url', '')") on pull request #$number"
    fi
}

post_gitlab() {  # post_gitlab PAYLOAD
    local payload=$1 notes out id
    need HWAAC_GITLAB_TOKEN "a project access token with the api scope (Reporter), a masked CI/CD variable"
    if [[ -z "${CI_MERGE_REQUEST_IID:-}" ]]; then
        log "not a merge request pipeline: nothing to comment on; the comment is in $CI_DIR/comment.md"
        return
    fi
    notes="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes"
    HDR=("PRIVATE-TOKEN: $HWAAC_GITLAB_TOKEN" "Accept: application/json")
    out=$(scratch)
    id=$(find_comment "$notes?sort=asc&order_by=created_at&")
    if [[ -n "$id" ]]; then
        http PUT "$notes/$id" "$out" "$payload" >/dev/null
        log "updated the review note $id on merge request !$CI_MERGE_REQUEST_IID"
    else
        http POST "$notes" "$out" "$payload" >/dev/null
        log "posted the review note $(json "$out" "d['id']") on merge request !$CI_MERGE_REQUEST_IID"
    fi
}

cmd_comment() {
    local payload review_rc plan_rc
    need HWAAC_FABRIC "the fabric's folder under inventory/"
    payload=$(scratch)
    comment_body "$payload"
    case "$(platform)" in
        github) post_github "$payload" ;;
        gitlab) post_gitlab "$payload" ;;
        *) log "not in GitHub Actions or GitLab CI: the comment is in $CI_DIR/comment.md" ;;
    esac
    review_rc=$(cat "$CI_DIR/review.rc" 2>/dev/null || echo 0)
    plan_rc=$(cat "$CI_DIR/terraform-plan.rc" 2>/dev/null || echo 0)
    [[ "$review_rc" != 3 ]] ||
        fail 3 "the review refuses this change (renumbering or removal without --allow-*): see the comment"
    [[ "$plan_rc" == 0 ]] || fail 1 "terraform plan failed (exit $plan_rc): see the comment"
}

# --- apply and deploy ------------------------------------------------------------------------------------------

cmd_apply() {
    local stack
    fabric_dir >/dev/null
    no_state_in_ci refuse
    mkdir -p "$CI_DIR"
    stack=$(synth)
    tf_init "$stack"
    # the plan applied is made here, against the state and NetBox as they are now (concurrency group /
    # resource_group: no other apply runs meanwhile); apply of a saved plan does exactly that plan
    tf_plan "$stack" "$CI_DIR/apply-plan.txt" || fail 1 "terraform plan failed in $stack"
    terraform -chdir="$stack" apply -input=false -no-color -lock-timeout="${HWAAC_TF_LOCK_TIMEOUT:-10m}" \
        "$(ci_abs)/tfplan" 2>&1 | tee "$CI_DIR/apply.txt" || fail 1 "terraform apply failed in $stack"
}

awx_url() {  # AWX_HOST with a scheme and without a trailing slash
    local host=${AWX_HOST%/}
    [[ "$host" == http://* || "$host" == https://* ]] || host="https://$host"
    echo "$host"
}

cmd_deploy() {
    local kind=${HWAAC_AWX_TEMPLATE_KIND:-job_template} template=${HWAAC_AWX_TEMPLATE:-hwaac fabric deploy}
    local api list jobs key out body id job status deadline poll=${HWAAC_AWX_POLL:-10}
    need AWX_HOST "the AWX (automation controller) URL, e.g. https://awx.example.com"
    need AWX_TOKEN "an AWX OAuth2 token of a user who may execute the template (a secret)"
    need HWAAC_FABRIC "the fabric's folder under inventory/"
    case "$kind" in
        job_template) list=job_templates jobs=jobs key=job ;;
        workflow_job_template) list=workflow_job_templates jobs=workflow_jobs key=workflow_job ;;
        *) fail 2 "HWAAC_AWX_TEMPLATE_KIND=$kind: valid: job_template, workflow_job_template" ;;
    esac
    api="$(awx_url)/api/v2"
    HDR=("Authorization: Bearer $AWX_TOKEN" "Accept: application/json")
    out=$(scratch)
    body=$(scratch)
    if [[ "$template" =~ ^[0-9]+$ ]]; then
        id=$template
    else
        http GET "$api/$list/?name=$("$PYTHON" -c 'import sys, urllib.parse as u; print(u.quote(sys.argv[1]))' \
            "$template")" "$out" >/dev/null
        [[ "$(json "$out" "d['count']")" == 1 ]] ||
            fail 2 "HWAAC_AWX_TEMPLATE=$template: $(json "$out" "d['count']") $kind(s) of that name in AWX; name one, or give its id"
        id=$(json "$out" "str(d['results'][0]['id'])")
    fi
    "$PYTHON" - "$body" "${HWAAC_AWX_EXTRA_VARS:-}" <<'EOF'
import json, sys
body, extra = sys.argv[1:]
# by default: playbooks/fabric_deploy.yml renders from NetBox, which Terraform has just written (a survey question
# of the job template "hwaac fabric deploy", awx/objects/job_templates_deploy.yml, which holds the fabric's folder).
# HWAAC_AWX_EXTRA_VARS, when set, is sent instead.
extra_vars = {"fabric_deploy_render": "netbox"}
if extra:
    try:
        more = json.loads(extra)
    except ValueError as exc:
        more = f"not JSON ({exc})"
    if not isinstance(more, dict):
        print(f"hwaac-ci: HWAAC_AWX_EXTRA_VARS={extra}: {more if isinstance(more, str) else 'not an object'}; "
              'give a JSON object, e.g. {"fabric_deploy_serial": "10%"}', file=sys.stderr)
        sys.exit(2)
    extra_vars = more
json.dump({"extra_vars": extra_vars}, open(body, "w"))
EOF
    # AWX drops the variables a template does not prompt for (ignored_fields): refuse before launching instead
    http GET "$api/$list/$id/launch/" "$out" >/dev/null
    if [[ "$(json "$out" "d.get('ask_variables_on_launch', False)")" != true ]]; then
        local asked=() stray
        if [[ "$(json "$out" "d.get('survey_enabled', False)")" == true ]]; then
            http GET "$api/$list/$id/survey_spec/" "$out" >/dev/null
            mapfile -t asked < <(json "$out" "chr(10).join(q['variable'] for q in d.get('spec', []))")
        fi
        stray=$(json "$body" "', '.join(sorted(set(d['extra_vars']) - set(a)))" "${asked[@]}")
        [[ -z "$stray" ]] || fail 2 "$kind $id ($template) takes no $stray at launch (its survey asks for:" \
            "${asked[*]:-nothing}): add them to its survey, enable Prompt on launch for Variables, or drop them"
    fi
    http POST "$api/$list/$id/launch/" "$out" "$body" >/dev/null
    rm -f "$body"  # sent: its variables (which may be secrets) need not wait an hour of polling for the exit trap
    job=$(json "$out" "str(d['$key'])")
    mkdir -p "$CI_DIR"
    cp "$out" "$CI_DIR/awx-launch.json"
    log "launched $kind $id ($template): $key $job, $(awx_url)$(json "$out" "d.get('url', '')")"
    deadline=$(( $(date +%s) + ${HWAAC_AWX_TIMEOUT:-3600} ))
    status=""
    while :; do
        http GET "$api/$jobs/$job/" "$out" >/dev/null
        local now
        now=$(json "$out" "d['status']")
        [[ "$now" != "$status" ]] && log "$key $job: $now"
        status=$now
        case "$status" in
            successful) break ;;
            failed | error | canceled)
                if [[ "$key" == job ]]; then
                    http GET "$api/jobs/$job/stdout/?format=txt" "$out" >/dev/null && tail -n 40 "$out" >&2
                fi
                fail 1 "AWX $key $job ended $status"
                ;;
        esac
        (( $(date +%s) < deadline )) || fail 1 "AWX $key $job still $status after ${HWAAC_AWX_TIMEOUT:-3600} s"
        sleep "$poll"
    done
}

usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

main() {
    local cmd=${1:-}
    [[ $# -gt 0 ]] && shift
    # one private folder (mode 0700) for every temporary file, removed on any exit: a step that fails (exit in a
    # command substitution included: set -e ends the script) or a job cancelled with SIGINT/SIGTERM leaves nothing
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    TMP=$(mktemp -d -t hwaac-ci.XXXXXX)
    case "$cmd" in
        setup | validate | plan | review | comment | apply | deploy) "cmd_$cmd" "$@" ;;
        *) usage ;;
    esac
}

main "$@"
