package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The prefix index of llm-d's published approximate run sees only a prompt's first 16,384 characters, so in llm-d's
 * workload (a 6,000-token system prompt, then a user's 1,200-token question) it cannot tell users of a group apart.
 */
class GiePrefixIndexTest {

  @Test
  void promptsThatDifferOnlyAfterTheFirst256BlocksLookTheSame() {
    GiePrefixIndex index = new GiePrefixIndex(2, "Qwen3-32B");
    String system = "s".repeat(30_000);
    long[] alice = index.blocks(system + " question of alice");
    long[] bob = index.blocks(system + " question of bob");
    assertThat(alice).hasSize(GiePrefixIndex.MAX_BLOCKS).containsExactly(bob);
    index.record(1, alice);
    assertThat(index.match(bob)).containsExactly(0, GiePrefixIndex.MAX_BLOCKS);
  }

  @Test
  void aShortPromptMatchesItsFullBlocksOnly() {
    GiePrefixIndex index = new GiePrefixIndex(1, "m");
    long[] blocks = index.blocks("x".repeat(64 * 3 + 10));
    assertThat(blocks).hasSize(3);
    index.record(0, index.blocks("x".repeat(64 * 2)));
    assertThat(index.match(blocks)).containsExactly(2);
  }

  @Test
  void theEstimatedRouterIsKnownByNameButNotInTheDefaultSet() {
    assertThat(Routers.create("llm-d-estimated", 1).name()).isEqualTo("llm-d-estimated");
    assertThat(Routers.ALL).doesNotContain("llm-d-estimated");
  }
}
