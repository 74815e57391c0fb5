"""Runs the landing workflows of ci/ locally, the way their CI would, for tests: no local runner
of GitHub Actions or GitLab CI is packaged, so this checks each workflow's structure (jobs,
needs, matrices, expressions, artifacts, the scripts its steps call) and then executes its jobs in
dependency order — every matrix instance in its own fresh clone of a repository, `run`/`script`
lines in bash, checkout and artifact steps emulated with folders — and returns what each job did.

Only the workflow features ci/github/landing.yml and ci/gitlab/landing.gitlab-ci.yml use are
understood; anything else is a validation error, so a workflow cannot grow a feature this runner
would silently ignore."""
import fnmatch
import itertools
import os
import re
import shutil
import subprocess

import yaml


class WorkflowError(Exception):
    """The workflow is malformed or uses something this runner does not know."""


class JobRun:
    def __init__(self, name, matrix, index):
        self.name, self.matrix, self.index = name, matrix, index
        self.ok = True
        self.skipped = False
        self.log = []            # (step, exit code, stdout+stderr)
        self.outputs = {}        # step id -> {key: value}
        self.summary = ""
        self.workspace = None

    def __repr__(self):
        return "%s%s: %s" % (self.name, self.matrix or "", "skipped" if self.skipped else "ok" if self.ok else "FAILED")

    def text(self):
        return "\n".join("--- %s (exit %s)\n%s" % s for s in self.log)


def _run_bash(script, cwd, env, timeout):
    p = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def _clone(repo, dest, sha, full):
    args = ["git", "clone", "-q"] + ([] if full else ["--depth", "1", "--no-local"]) + [repo, dest]
    subprocess.run(args, check=True, capture_output=True)
    subprocess.run(["git", "-C", dest, "checkout", "-q", sha], check=True, capture_output=True)


def _copy_into(src, dest):
    if os.path.isdir(src):
        shutil.copytree(src, dest, dirs_exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        shutil.copy2(src, dest)


def _check_scripts(text, repo, where):
    """Every repository script a step calls (ci/… or scripts/…) exists and is executable."""
    for path in re.findall(r"(?<![\w/.-])((?:ci|scripts)/[\w./-]+\.(?:sh|py))", text):
        full = os.path.join(repo, path)
        if not os.path.isfile(full):
            raise WorkflowError("%s: calls %s, which the repository does not have" % (where, path))
        if not os.access(full, os.X_OK):
            raise WorkflowError("%s: %s is not executable" % (where, path))


# ---------------------------------------------------------------------------------------------
# GitHub Actions

GITHUB_JOB_KEYS = {"runs-on", "container", "strategy", "steps", "needs", "if", "outputs", "env"}
GITHUB_STEP_KEYS = {"name", "id", "uses", "run", "with", "if", "continue-on-error", "env"}
GITHUB_ACTIONS = {
    "actions/checkout@v4": {"fetch-depth"},
    "actions/upload-artifact@v4": {"name", "path", "retention-days", "if-no-files-found"},
    "actions/download-artifact@v4": {"name", "pattern", "path"},
}
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class CiConfig:
    """A CI configuration file read and validated (validate() raises WorkflowError), to run in repo."""

    def __init__(self, path, repo):
        self.path, self.repo = path, repo
        with open(path) as f:
            self.doc = yaml.safe_load(f)
        self.validate()


class GitHubWorkflow(CiConfig):

    def validate(self):
        d = self.doc
        where = os.path.basename(self.path)
        # PyYAML reads the key `on` as the boolean True (YAML 1.1).
        if not isinstance(d, dict) or "jobs" not in d or not ({"on", True} & set(d)):
            raise WorkflowError("%s: needs `on` and `jobs`" % where)
        jobs = d["jobs"]
        for name, job in jobs.items():
            w = "%s: jobs.%s" % (where, name)
            unknown = set(job) - GITHUB_JOB_KEYS
            if unknown:
                raise WorkflowError("%s: unknown keys %s" % (w, sorted(unknown)))
            if "runs-on" not in job or not job.get("steps"):
                raise WorkflowError("%s: needs runs-on and steps" % w)
            for n in self.needs(name):
                if n not in jobs:
                    raise WorkflowError("%s: needs unknown job %s" % (w, n))
            matrix = job.get("strategy", {}).get("matrix", {})
            ids = set()
            for i, step in enumerate(job["steps"]):
                ws = "%s.steps[%d]" % (w, i)
                unknown = set(step) - GITHUB_STEP_KEYS
                if unknown:
                    raise WorkflowError("%s: unknown keys %s" % (ws, sorted(unknown)))
                if ("uses" in step) == ("run" in step):
                    raise WorkflowError("%s: exactly one of uses or run" % ws)
                if "uses" in step:
                    allowed = GITHUB_ACTIONS.get(step["uses"])
                    if allowed is None:
                        raise WorkflowError("%s: action %s is not one this runner knows" % (ws, step["uses"]))
                    bad = set(step.get("with", {})) - allowed
                    if bad:
                        raise WorkflowError("%s: %s takes no %s" % (ws, step["uses"], sorted(bad)))
                else:
                    _check_scripts(step["run"], self.repo, ws)
                for text in [str(v) for v in step.get("with", {}).values()] + [step.get("run", ""), step.get("if", "")]:
                    for e in EXPR.findall(text):
                        self.check_expression(e, matrix, ids, ws)
                if "id" in step:
                    if step["id"] in ids:
                        raise WorkflowError("%s: duplicate step id %s" % (ws, step["id"]))
                    ids.add(step["id"])
            if "if" in job and job["if"] not in ("always()", "success()"):
                raise WorkflowError("%s: if: %s is not one this runner knows" % (w, job["if"]))
        self.order()  # no cycles

    def check_expression(self, e, matrix, step_ids, where):
        if e in ("strategy.job-index", "always()", "success()", "failure()"):
            return
        m = re.fullmatch(r"matrix\.([\w-]+)", e)
        if m:
            if m.group(1) not in matrix:
                raise WorkflowError("%s: ${{ %s }}: the matrix has no %s" % (where, e, m.group(1)))
            return
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", e)
        if m:
            if m.group(1) not in step_ids:
                raise WorkflowError("%s: ${{ %s }}: no earlier step %s" % (where, e, m.group(1)))
            return
        raise WorkflowError("%s: ${{ %s }} is not an expression this runner knows" % (where, e))

    def needs(self, name):
        n = self.doc["jobs"][name].get("needs", [])
        return [n] if isinstance(n, str) else list(n)

    def order(self):
        done, order = set(), []
        jobs = self.doc["jobs"]
        while len(order) < len(jobs):
            ready = [j for j in jobs if j not in done and all(n in done for n in self.needs(j))]
            if not ready:
                raise WorkflowError("%s: the needs of %s form a cycle" % (self.path, sorted(set(jobs) - done)))
            for j in ready:
                done.add(j)
                order.append(j)
        return order

    @staticmethod
    def matrix_instances(job):
        matrix = job.get("strategy", {}).get("matrix")
        if not matrix:
            return [{}]
        keys = list(matrix)
        return [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]

    def run(self, origin, sha, work, env_for, timeout=900):
        """Runs every job; env_for(job_name, job) gives the environment of its runner."""
        artifacts = os.path.join(work, "artifacts")
        os.makedirs(artifacts, exist_ok=True)
        runs = {}
        for name in self.order():
            job = self.doc["jobs"][name]
            needed_ok = all(r.ok and not r.skipped for n in self.needs(name) for r in runs[n])
            runs[name] = []
            for index, matrix in enumerate(self.matrix_instances(job)):
                r = JobRun(name, matrix, index)
                runs[name].append(r)
                if not needed_ok and job.get("if") != "always()":
                    r.skipped = True
                    continue
                self.run_job(r, job, origin, sha, work, artifacts, env_for(name, job), timeout)
        return runs

    def substitute(self, text, r, job_outputs):
        def value(m):
            e = m.group(1)
            if e == "strategy.job-index":
                return str(r.index)
            if e.startswith("matrix."):
                return str(r.matrix[e[len("matrix."):]])
            s = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", e)
            if s:
                return job_outputs.get(s.group(1), {}).get(s.group(2), "")
            raise WorkflowError("cannot evaluate ${{ %s }}" % e)
        return EXPR.sub(value, text)

    def run_job(self, r, job, origin, sha, work, artifacts, env, timeout):
        ws = os.path.join(work, "%s-%d" % (r.name, r.index))
        r.workspace = ws
        summary = os.path.join(work, "%s-%d.summary.md" % (r.name, r.index))
        open(summary, "w").close()
        for step in job["steps"]:
            label = step.get("name", step.get("uses", step.get("run", "")[:40]))
            if not r.ok and step.get("if") != "always()":
                r.log.append((label, "skipped", ""))
                continue
            code, out = self.run_step(step, r, ws, origin, sha, artifacts, env, summary, timeout)
            r.log.append((label, code, out))
            if code != 0 and not step.get("continue-on-error"):
                r.ok = False
        with open(summary) as f:
            r.summary = f.read()

    def run_step(self, step, r, ws, origin, sha, artifacts, env, summary, timeout):
        w = {k: self.substitute(str(v), r, r.outputs) for k, v in step.get("with", {}).items()}
        uses = step.get("uses")
        if uses == "actions/checkout@v4":
            _clone(origin, ws, sha, full=w.get("fetch-depth") == "0")
            return 0, "checked out %s" % sha
        if uses == "actions/upload-artifact@v4":
            src = os.path.join(ws, w["path"])
            dest = os.path.join(artifacts, w["name"])
            if os.path.exists(dest):
                return 1, "artifact %s uploaded twice (names must be unique across the matrix)" % w["name"]
            if not os.path.exists(src):
                return (0, "no files at %s" % w["path"]) if w.get("if-no-files-found") == "ignore" else (1, "no files at %s" % w["path"])
            _copy_into(src, dest)
            return 0, "uploaded %s" % w["name"]
        if uses == "actions/download-artifact@v4":
            dest = os.path.join(ws, w.get("path", "."))
            if "name" in w:
                src = os.path.join(artifacts, w["name"])
                if not os.path.isdir(src):
                    return 1, "no artifact named %s" % w["name"]
                _copy_into(src, dest)
                return 0, "downloaded %s" % w["name"]
            names = [n for n in sorted(os.listdir(artifacts)) if fnmatch.fnmatch(n, w["pattern"])]
            for n in names:  # several artifacts: one folder each, named after it
                _copy_into(os.path.join(artifacts, n), os.path.join(dest, n))
            return 0, "downloaded %s" % names
        output = os.path.join(ws + ".output")
        open(output, "w").close()
        e = dict(env, GITHUB_SHA=sha, GITHUB_OUTPUT=output, GITHUB_STEP_SUMMARY=summary, CI="true")
        code, out = _run_bash(self.substitute(step["run"], r, r.outputs), ws, e, timeout)
        if "id" in step:
            with open(output) as f:
                r.outputs[step["id"]] = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
        return code, out


# ---------------------------------------------------------------------------------------------
# GitLab CI

GITLAB_JOB_KEYS = {"stage", "image", "tags", "needs", "parallel", "script", "artifacts", "when", "variables"}


class GitLabPipeline(CiConfig):

    def jobs(self):
        return {k: v for k, v in self.doc.items() if k not in ("stages", "variables", "include", "default")}

    def validate(self):
        where = os.path.basename(self.path)
        stages = self.doc.get("stages")
        if not isinstance(stages, list) or not stages:
            raise WorkflowError("%s: needs stages" % where)
        jobs = self.jobs()
        for name, job in jobs.items():
            w = "%s: %s" % (where, name)
            unknown = set(job) - GITLAB_JOB_KEYS
            if unknown:
                raise WorkflowError("%s: unknown keys %s" % (w, sorted(unknown)))
            if job.get("stage") not in stages:
                raise WorkflowError("%s: stage %s is not in stages" % (w, job.get("stage")))
            if not job.get("script"):
                raise WorkflowError("%s: needs a script" % w)
            for n in job.get("needs", []):
                if n not in jobs:
                    raise WorkflowError("%s: needs unknown job %s" % (w, n))
                if stages.index(jobs[n]["stage"]) >= stages.index(job["stage"]):
                    raise WorkflowError("%s: needs %s of a later or the same stage" % (w, n))
            if job.get("when", "on_success") not in ("on_success", "always"):
                raise WorkflowError("%s: when: %s is not one this runner knows" % (w, job.get("when")))
            variables = set(self.doc.get("variables", {})) | {"CI_JOB_ID", "CI_COMMIT_SHA", "CI_PROJECT_DIR"}
            for inst in self.matrix_instances(job):
                variables |= set(inst)
            for line in job["script"]:
                _check_scripts(line, self.repo, w)
                for v in re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", line):
                    if v not in variables:
                        raise WorkflowError("%s: script uses $%s, which nothing defines" % (w, v))

    @staticmethod
    def matrix_instances(job):
        entries = job.get("parallel", {}).get("matrix")
        if not entries:
            return [{}]
        out = []
        for entry in entries:
            keys = list(entry)
            lists = [entry[k] if isinstance(entry[k], list) else [entry[k]] for k in keys]
            out += [dict(zip(keys, values)) for values in itertools.product(*lists)]
        return out

    def run(self, origin, sha, work, env_for, timeout=900):
        stages = self.doc["stages"]
        jobs = sorted(self.jobs().items(), key=lambda kv: stages.index(kv[1]["stage"]))
        stored = os.path.join(work, "artifacts")
        runs, job_id = {}, 1000
        for name, job in jobs:
            needed = job.get("needs", [])
            needed_ok = all(r.ok and not r.skipped for n in needed for r in runs[n])
            runs[name] = []
            for index, matrix in enumerate(self.matrix_instances(job)):
                job_id += 1
                r = JobRun(name, matrix, index)
                runs[name].append(r)
                if not needed_ok and job.get("when") != "always":
                    r.skipped = True
                    continue
                ws = os.path.join(work, "%s-%d" % (name.replace(":", "_"), index))
                r.workspace = ws
                _clone(origin, ws, sha, full=str(self.doc.get("variables", {}).get("GIT_DEPTH")) == "0")
                for n in needed:  # GitLab fetches every needed job's artifacts into the workspace
                    for other in runs[n]:
                        src = os.path.join(stored, "%s-%d" % (n, other.index))
                        if os.path.isdir(src):
                            _copy_into(src, ws)
                env = dict(env_for(name, job), CI_JOB_ID=str(job_id), CI_COMMIT_SHA=sha, CI_PROJECT_DIR=ws, CI="true",
                           **{k: str(v) for k, v in self.doc.get("variables", {}).items()}, **matrix)
                # One shell for the whole script, stopping at the first failing line (as the runner does).
                code, out = _run_bash("\n".join(job["script"]), ws, env, timeout)
                r.log.append(("script", code, out))
                r.ok = code == 0
                dest = os.path.join(stored, "%s-%d" % (name, index))
                arts = job.get("artifacts", {})
                if r.ok or arts.get("when") == "always":
                    for pattern in arts.get("paths", []):
                        for hit in sorted(set(_glob(ws, pattern))):
                            _copy_into(os.path.join(ws, hit), os.path.join(dest, hit))
        return runs


def _glob(root, pattern):
    import glob
    return [os.path.relpath(p, root) for p in glob.glob(os.path.join(root, pattern))]
