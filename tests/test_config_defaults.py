"""One home of defaults: the schemas. config.yaml states only the keys a config must give and values that
differ from a schema default, each with its reason; the configuration reference is generated from them."""

from _helpers import REPO
from depthwidth.config_reference import config_file_issues, reference_markdown


def test_config_yaml_restates_and_contradicts_no_schema_default():
    issues = config_file_issues((REPO / "config.yaml").read_text())
    assert issues == [], "config.yaml and the schemas disagree:\n" + "\n".join(issues)


def test_the_check_catches_a_restated_default_and_an_unexplained_override():
    text = (
        "stages: [chinchilla]\n"
        "data: {mirrors: [data/mirror]}\n"
        "superposition:\n"
        "  job_grouping: law\n"  # the schema default: restated
        "  path: cell_rows\n"  # differs, no reason given
        "  loss_scale: 100.0   # exp-17's scale\n"  # differs, with its reason
        "depth_toy:\n"
        "  variants:\n"
        "    mse: {depths: [4, 8], steps: 10, lr: 6.0e-4, schedule: flat_then_linear}\n"
    )
    issues = config_file_issues(text)
    assert [i.split(":")[0] for i in issues] == [
        "superposition.job_grouping",
        "superposition.path",
        "depth_toy.variants.mse.lr",  # an entry's value may differ freely, but not restate a default
    ]
    assert "restates the schema default" in issues[0] and "without a comment" in issues[1]


def test_configuration_reference_is_current():
    page = REPO / "docs" / "configuration.md"
    assert page.read_text() == reference_markdown(), (
        "docs/configuration.md is stale: run `python -m depthwidth.config_reference docs/configuration.md`"
    )


def test_configuration_reference_lists_every_schema_key_with_its_default():
    page = reference_markdown()
    # a key of each kind: a plain default, a required key with the default run's value, an entry's key
    assert '| `superposition.job_grouping` | one of `"cell"`, `"law"` | `"law"` |' in page
    assert "| `superposition.batch_size` | integer | required | `512` |" in page
    assert "| `depth_toy.variants.<name>.lr` | number | `0.0006` |" in page
    assert "| `hidden_states.max_tokens` | integer | `256` |" in page
