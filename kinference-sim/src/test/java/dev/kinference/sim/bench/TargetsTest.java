package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TargetsTest {

  /** The reasoning report said "MISSED: peak goodput vs llm-d-precise: 4.4 vs 4.4 req/min" for 4.40 against 4.43. */
  @Test
  void aMissedComparisonShowsTheDecimalsThatTellItsValuesApart() {
    assertThat(Targets.versus(4.4, 4.4333)).isEqualTo("4.40 vs 4.43");
    assertThat(Targets.versus(4.4, 4.4004)).isEqualTo("4.400 vs 4.400");
    assertThat(Targets.versus(190.3, 186.4)).isEqualTo("190.3 vs 186.4");
    assertThat(Targets.versus(4.4, 4.4)).isEqualTo("4.4 vs 4.4");
  }
}
