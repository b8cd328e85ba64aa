"""Does deployments/k8s/rbac.yaml allow an API call? (used to check the launcher's real requests)."""

import re
from pathlib import Path

import yaml

RBAC_YAML = Path(__file__).resolve().parents[2] / "deployments" / "k8s" / "rbac.yaml"
_VERBS = {"POST": "create", "DELETE": "delete", "PUT": "update", "PATCH": "patch"}
_PATH = re.compile(r"^/(?:api/v1|apis/(?P<group>[^/]+)/[^/]+)/namespaces/(?P<ns>[^/]+)/(?P<resource>[^/]+)"
                   r"(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")


def launcher_role() -> dict:
    return next(d for d in yaml.safe_load_all(RBAC_YAML.read_text()) if d["kind"] == "Role")


def rbac_allows(method: str, path: str) -> bool:
    match = _PATH.match(path)
    if not match:
        return False
    group = match["group"] or ""
    resource = f"{match['resource']}/{match['sub']}" if match["sub"] else match["resource"]
    verb = _VERBS.get(method) or ("get" if match["name"] else "list")
    role = launcher_role()
    return match["ns"] == role["metadata"]["namespace"] and any(
        group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"] for rule in role["rules"])
