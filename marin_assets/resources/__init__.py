"""Resources, switched by one environment variable: MARIN_ENV=local (default) or production."""

from marin_assets.resources.environments import ENVIRONMENTS, current_environment, executor_for, resources_for

__all__ = ["ENVIRONMENTS", "current_environment", "executor_for", "resources_for"]
