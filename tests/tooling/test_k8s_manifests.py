"""The course's Kubernetes Job (issue 48): the rendered manifests carry what they must and validate offline.

Every required field is asserted by name (tools/course/k8s.py); the schema check is
kubernetes-validate's, with its bundled schemas, and is shown to fail on broken
manifests, and to need no network.
"""

from __future__ import annotations

import copy
import re
import socket
from pathlib import Path

import pytest

from tools.course import k8s

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rendered():
    policy, job = k8s.manifests("ch04", 37, parallelism=8, image="registry.example/posenc:1.0", deadline=5400)
    return policy, job


def test_the_manifests_validate_against_the_kubernetes_schema_without_the_network(rendered, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the validator tried to open a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    k8s.validate(list(rendered))


def test_the_job_is_indexed_one_completion_per_submission(rendered):
    spec = rendered[1]["spec"]
    assert rendered[1]["apiVersion"] == "batch/v1" and rendered[1]["kind"] == "Job"
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == 37 and spec["parallelism"] == 8
    assert spec["activeDeadlineSeconds"] == 5400
    assert spec["template"]["spec"]["restartPolicy"] == "Never"


def test_parallelism_never_exceeds_the_submissions():
    assert k8s.manifests("ch04", 3, parallelism=50)[1]["spec"]["parallelism"] == 3


def _containers(job):
    pod = job["spec"]["template"]["spec"]
    return pod["initContainers"] + pod["containers"]


def test_each_pod_is_confined(rendered):
    pod = rendered[1]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in _containers(rendered[1]):
        context = container["securityContext"]
        assert context["runAsNonRoot"] is True
        assert context["readOnlyRootFilesystem"] is True
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        assert container["image"] == "registry.example/posenc:1.0"


def test_each_pod_gets_one_cpu_and_2_gib(rendered):
    pod = rendered[1]["spec"]["template"]["spec"]
    grade = next(c for c in pod["initContainers"] if c["name"] == "grade")
    assert grade["resources"] == {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
    # the pod's effective request: the largest init container's, or the sum of the others', whichever is more
    others = [c for c in _containers(rendered[1]) if c["name"] != "grade"]
    assert all(c["resources"]["requests"] == c["resources"]["limits"] for c in others)
    assert sum(int(c["resources"]["requests"]["cpu"].rstrip("m")) for c in pod["containers"]) <= 1000


def test_the_grading_step_never_mounts_the_shared_volume(rendered):
    pod = rendered[1]["spec"]["template"]["spec"]
    claims = {v["name"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
    scratch = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    assert claims == {"shared"} and {"inputs", "out", "scratch"} <= scratch
    by_name = {c["name"]: c for c in _containers(rendered[1])}
    assert [c["name"] for c in pod["initContainers"]] == ["stage", "grade"]
    assert not any(m["name"] == "shared" for m in by_name["grade"]["volumeMounts"])
    stage_shared = next(m for m in by_name["stage"]["volumeMounts"] if m["name"] == "shared")
    assert stage_shared["readOnly"] is True and stage_shared["subPath"] == "ch04"
    publish_shared = next(m for m in by_name["publish"]["volumeMounts"] if m["name"] == "shared")
    assert publish_shared["subPath"] == "ch04/results" and not publish_shared.get("readOnly")
    assert by_name["grade"]["command"][-8:] == [
        "--release", "/inputs/course", "--index", "/inputs/index.json", "--out", "/out", "--scratch", "/scratch",
    ]  # fmt: skip


def test_the_network_policy_denies_everything_to_and_from_the_pods(rendered):
    policy, job = rendered
    assert policy["apiVersion"] == "networking.k8s.io/v1" and policy["kind"] == "NetworkPolicy"
    assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert "egress" not in policy["spec"] and "ingress" not in policy["spec"]  # no rule: nothing allowed
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    assert policy["metadata"]["namespace"] == job["metadata"]["namespace"]


def _broken(rendered, change):
    job = copy.deepcopy(rendered[1])
    change(job)
    return job


@pytest.mark.parametrize(
    "change",
    [
        lambda job: job["spec"].update(completions="many"),
        lambda job: job["spec"]["template"]["spec"].update(restartPolicy=7),
        lambda job: job["spec"].update(completionsMode="Indexed"),  # a misspelt field (strict)
        lambda job: job["spec"]["template"]["spec"]["containers"][0].pop("name"),
    ],
    ids=["completions-a-string", "restart-policy-a-number", "unknown-field", "container-without-name"],
)
def test_the_validator_fails_on_a_broken_manifest(rendered, change):
    import kubernetes_validate

    with pytest.raises(kubernetes_validate.ValidationError):
        k8s.validate([_broken(rendered, change)])


@pytest.mark.parametrize(
    ("arguments", "words"),
    [({"parallelism": 0}, "parallelism"), ({"deadline": True}, "deadline"), ({"image": "a b"}, "image")],
)
def test_bad_arguments_are_named(arguments, words):
    with pytest.raises(ValueError, match=words):
        k8s.manifests("ch04", 2, **arguments)


def test_the_make_targets_exist_with_their_help():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("grading-image", "k8s-job", "k8s-merge"):
        assert re.search(rf"^## .+\n{target}:", makefile, re.M), target


def test_the_image_recipe_installs_the_pinned_environment_and_runs_as_the_pods_user():
    recipe = (ROOT / "deploy" / "k8s" / "Containerfile").read_text()
    assert "requirements-course.txt" in recipe and "constraints.txt" in recipe
    assert f"USER {k8s.POD_UID}" in recipe


@pytest.mark.parametrize("name", ["pvc.yaml", "copy-pod.yaml"])
def test_the_guide_s_other_manifests_validate(name):
    import yaml

    documents = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / name).read_text()))
    k8s.validate(documents)
    if name == "pvc.yaml":
        assert documents[0]["spec"]["accessModes"] == ["ReadWriteMany"]
        assert documents[0]["metadata"]["name"] == "posenc-grading"  # the Job's default claim
