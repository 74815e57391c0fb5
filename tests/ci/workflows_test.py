#!/usr/bin/env python3
"""The landing workflows of ci/ (GitHub Actions and GitLab CI), validated and run job by job with
tests/ci/workflow_runner.py on a throwaway repository: the fake engine of the landing e2e tests
(tests/gates/landing/fake/), this repository's ci/ scripts, and the fake gate profile as
profiles/gates/default.yaml. Hosted runners have no GPU (the fake engine answers exit 3 there),
the self-hosted "gpu" runners have one; `landing` is the build's (the $LANDING the ci scripts
honour), so the throwaway repository needs no landing sources.

usage: workflows_test.py LANDING SOURCE_DIR FAKE_ENGINE_DIR FIXTURES_DIR   ($PFX_FIXTURES wins)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

LANDING, SOURCE, FAKE, FIXTURES = (os.path.abspath(a) for a in sys.argv[1:5])
FIXTURES = os.environ.get("PFX_FIXTURES") or FIXTURES
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workflow_runner import GitHubWorkflow, GitLabPipeline, WorkflowError  # noqa: E402

GITHUB = os.path.join(SOURCE, "ci/github/landing.yml")
GITLAB = os.path.join(SOURCE, "ci/gitlab/landing.gitlab-ci.yml")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, "-c", "user.name=ci-test", "-c", "user.email=ci@example.invalid", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


class ThrowawayProject:
    """A git repository shaped like a user's: the fake engine, ci/ and a gate profile."""

    def __init__(self, root):
        self.dir = os.path.join(root, "origin")
        os.makedirs(self.dir)
        for name in os.listdir(FAKE):
            shutil.copy2(os.path.join(FAKE, name), self.dir)
        shutil.copytree(os.path.join(SOURCE, "ci"), os.path.join(self.dir, "ci"))
        os.makedirs(os.path.join(self.dir, "scripts"))
        with open(os.path.join(self.dir, "scripts/bootstrap.sh"), "w") as f:
            f.write("#!/bin/sh\n# The throwaway project's dependencies are already here.\nexit 0\n")
        os.chmod(os.path.join(self.dir, "scripts/bootstrap.sh"), 0o755)
        os.makedirs(os.path.join(self.dir, "profiles/gates"))
        shutil.copy2(os.path.join(FAKE, "landing.yaml"), os.path.join(self.dir, "profiles/gates/default.yaml"))
        with open(os.path.join(self.dir, ".gitignore"), "w") as f:
            f.write(".landing/\nbuild/\n")
        git(self.dir, "init", "-q")
        self.commit("base")

    def behave(self, **patch):
        path = os.path.join(self.dir, "behaviour.json")
        with open(path) as f:
            b = json.load(f)
        b.update(patch)
        with open(path, "w") as f:
            json.dump(b, f)

    def commit(self, message):
        git(self.dir, "add", "-A")
        git(self.dir, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.dir, "rev-parse", "HEAD")


def runner_env(gpu):
    env = dict(os.environ, LANDING=LANDING, PFX_FIXTURES=FIXTURES, FAKE_PREFILL_CUDA="1" if gpu else "0")
    env.pop("GITHUB_OUTPUT", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def github_env(name, job):
    labels = job["runs-on"] if isinstance(job["runs-on"], list) else [job["runs-on"]]
    return runner_env("gpu" in labels)


def gitlab_env(name, job):
    return runner_env("gpu" in job.get("tags", []))


def landing_json(run):
    return newest_record(os.path.join(run.workspace, "build/reports"))


def newest_record(reports):
    with open(os.path.join(reports, "index.json")) as f:
        newest = max(json.load(f)["reports"], key=lambda r: r["seq"])
    with open(os.path.join(reports, newest["id"], "landing.json")) as f:
        return json.load(f)


class Validation(unittest.TestCase):
    def test_both_workflows_are_valid(self):
        gh = GitHubWorkflow(GITHUB, SOURCE)
        self.assertEqual(gh.order(), ["cpu", "gpu", "report"])
        self.assertIn("self-hosted", gh.doc["jobs"]["gpu"]["runs-on"])
        gl = GitLabPipeline(GITLAB, SOURCE)
        self.assertEqual(gl.jobs()["landing:gpu"]["tags"], ["gpu"])

    def test_the_runner_refuses_what_it_does_not_know(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.yml")
            with open(bad, "w") as f:
                f.write("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo ${{ matrix.nope }}\n")
            with self.assertRaises(WorkflowError):
                GitHubWorkflow(bad, SOURCE)
            with open(bad, "w") as f:
                f.write("on: push\njobs:\n  a:\n    runs-on: x\n    needs: b\n    steps:\n      - run: ci/no-such.sh\n")
            with self.assertRaises(WorkflowError):
                GitHubWorkflow(bad, SOURCE)


def land_in_ci(pipeline, config, d, message, env, **behaviour):
    """A throwaway project in d with one commit (message; the fake engine planted with behaviour),
    run through the CI config by its runner (GitHubWorkflow or GitLabPipeline): every job's runs."""
    project = ThrowawayProject(d)
    if behaviour:
        project.behave(**behaviour)
    sha = project.commit(message)
    return pipeline(config, project.dir).run(project.dir, sha, os.path.join(d, "work"), env)


class GitHubRun(unittest.TestCase):
    def test_pass_with_gpu_results_imported(self):
        with tempfile.TemporaryDirectory() as d:
            runs = land_in_ci(GitHubWorkflow, GITHUB, d, "a change to land", github_env)
            cpu, gpus, report = runs["cpu"][0], runs["gpu"], runs["report"][0]
            self.assertTrue(cpu.ok, cpu.text())
            self.assertEqual(cpu.outputs["land"]["verdict"], "INCOMPLETE")  # no GPU on the hosted runner
            self.assertEqual(cpu.outputs["land"]["report"].split("/")[:3], ["build", "reports", "default"])
            self.assertIn("::warning title=landing parity SKIPPED", cpu.text())
            self.assertEqual(len(gpus), 2)
            for g in gpus:
                self.assertTrue(g.ok, g.text())
            self.assertTrue(report.ok, report.text())
            self.assertEqual(report.outputs["publish"]["verdict"], "PASS")
            self.assertIn("::notice title=landing verdict PASS", report.text())
            self.assertIn("Verification", report.summary)
            rec = landing_json(report)
            self.assertEqual(rec["verdict"], "PASS")
            status = {g["gate"]: g["status"] for g in rec["gates"]}
            for gate in ("parity", "accuracy", "greedy", "ptxas", "suite", "ab"):
                self.assertEqual(status[gate], "PASS", gate)
            self.assertEqual(len(rec["imports"]), 2)
            # Reproduce commands name relative folders, never a runner's workspace.
            for g in rec["gates"]:
                for ws in (cpu.workspace, gpus[0].workspace, gpus[1].workspace, d):
                    self.assertNotIn(ws, g.get("command", ""), g["gate"])

    def test_gpu_failure_fails_the_pipeline_with_an_annotation(self):
        with tempfile.TemporaryDirectory() as d:
            runs = land_in_ci(GitHubWorkflow, GITHUB, d, "fast path: planted 5e-3 logit perturbation", github_env,
                              perturb_fast=5e-3)
            self.assertTrue(runs["cpu"][0].ok, runs["cpu"][0].text())
            report = runs["report"][0]
            self.assertFalse(report.ok, report.text())
            self.assertIn("::error title=landing parity FAIL::", report.text())
            self.assertEqual(report.outputs["publish"]["verdict"], "FAIL")


class GitLabRun(unittest.TestCase):
    def test_pass_with_gpu_results_imported(self):
        with tempfile.TemporaryDirectory() as d:
            runs = land_in_ci(GitLabPipeline, GITLAB, d, "a change to land", gitlab_env)
            for name in ("landing:cpu", "landing:gpu", "landing:report"):
                for r in runs[name]:
                    self.assertTrue(r.ok and not r.skipped, r.text())
            report = runs["landing:report"][0]
            reports = os.path.join(report.workspace, "build/reports/default")
            rec = newest_record(reports)
            self.assertEqual(rec["verdict"], "PASS")
            self.assertEqual(len(rec["imports"]), 2)
            self.assertTrue(os.path.exists(os.path.join(reports, "summary.md")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
