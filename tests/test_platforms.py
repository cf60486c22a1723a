"""The papers' machines as data: every shipped platform is complete and says where its
numbers come from; a user's platform file is checked key by key."""
import pytest

from tuwviz.platforms import NETWORK_MODELS, hostfile, platform, platforms, simgrid_xml

#: What the papers state about their machines (nodes x cores): the files must agree.
PAPERS = {"gatherv-ib36": (36, 16), "vsc3": (2000, 16), "anl-gige": (24, 4), "sx8": (30, 8),
          "xeon-ib16x2": (16, 2), "sicortex": (972, 6), "bgp": (16384, 4), "hydra": (36, 32),
          "irene": (1656, 48), "theta": (4392, 64), "cori": (2388, 32)}


def test_the_shipped_platforms_are_the_papers_machines():
    found = platforms()
    assert {n: (p.nodes, p.cores) for n, p in found.items()} == PAPERS
    for plat in found.values():
        assert plat.paper in ("gatherv", "allgatherv", "circulant", "intergroup"), plat.name
        assert plat.source.startswith("Paper, ") and "assumed" in plat.source, plat.name
        assert plat.intra_latency < plat.inter_latency, plat.name  # a node is closer than the network
        assert plat.network_model in NETWORK_MODELS


def test_the_simgrid_file_says_what_the_numbers_say():
    xml = simgrid_xml(platform("anl-gige"))
    assert 'radical="0-23"' in xml and 'core="4"' in xml and 'sharing_policy="SPLITDUPLEX"' in xml
    # two links per route between nodes: each carries half the latency
    assert 'lat="2.5e-05s"' in xml and 'bw="117000000.0Bps"' in xml
    assert 'loopback_lat="1e-06s"' in xml and 'loopback_bw="2000000000.0Bps"' in xml


def test_ranks_fill_nodes_block_by_block():
    plat = platform("sx8")
    assert hostfile(plat, 10) == ["node-0"] * 8 + ["node-1"] * 2
    assert len(set(hostfile(plat, 240))) == 30
    with pytest.raises(ValueError, match=r"241 processes do not fit platform sx8 \(30 x 8 = 240"):
        hostfile(plat, 241)
    assert hostfile(plat, 241, oversubscribe=True)[-1] == "node-0"


def test_a_users_platform_file(tmp_path):
    good = tmp_path / "here.toml"
    good.write_text('[platform.here]\ntitle = "this machine"\nnodes = 1\ncores = 2\n'
                    'inter_latency = 1e-6\ninter_bandwidth = 1e9\nintra_latency = 3e-7\n'
                    'intra_bandwidth = 5e9\n')
    plat = platform(str(good))
    assert (plat.name, plat.size, plat.network_model) == ("here", 2, "CM02")
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace("cores = 2", "cores = 0\nspeed = 3"))
    with pytest.raises(ValueError, match=r"bad.toml: platform 'here': unknown keys speed"):
        platform(str(bad))
    bad.write_text(good.read_text().replace("nodes = 1\n", ""))
    with pytest.raises(ValueError, match="missing nodes"):
        platform(str(bad))
    bad.write_text(good.read_text().replace("1e9", '"fast"'))
    with pytest.raises(ValueError, match="inter_bandwidth must be a float, got 'fast'"):
        platform(str(bad))
    with pytest.raises(ValueError, match="cannot read platforms"):
        platform(str(tmp_path / "missing.toml"))
