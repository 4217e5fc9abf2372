package dev.kinference.policy.model;

import static dev.kinference.request.TrafficClass.BATCH;
import static dev.kinference.request.TrafficClass.INTERACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class TenantTrafficTest {

  @Test
  void theDefaultIsInteractiveAtPriorityZeroWithBatchOnRequest() {
    Tenant.Traffic t = Tenant.Traffic.DEFAULT;
    assertThat(t.classFor(null)).isEqualTo(INTERACTIVE);
    assertThat(t.classFor(BATCH)).isEqualTo(BATCH);
    assertThat(t.classFor(INTERACTIVE)).isEqualTo(INTERACTIVE);
    assertThat(t.priority()).isZero();
    assertThat(t.clampPriority(Integer.MAX_VALUE)).isZero();
    assertThat(t.clampPriority(1)).isZero();
    assertThat(t.clampPriority(0)).isZero();
    assertThat(t.clampPriority(-7)).isEqualTo(-7);
    assertThat(t.clampPriority(Integer.MIN_VALUE)).isEqualTo(Tenant.Traffic.MIN_PRIORITY);
  }

  @Test
  void priorityIsClampedToMaxPriorityAndLowerAsksAreAlwaysAllowed() {
    Tenant.Traffic t = new Tenant.Traffic(INTERACTIVE, Set.of(), 2, 5);
    assertThat(t.clampPriority(Integer.MAX_VALUE)).isEqualTo(5);
    assertThat(t.clampPriority(6)).isEqualTo(5);
    assertThat(t.clampPriority(5)).isEqualTo(5);
    assertThat(t.clampPriority(3)).isEqualTo(3);
    assertThat(t.clampPriority(-1000)).isEqualTo(-1000);
    assertThat(t.clampPriority(-1001)).isEqualTo(-1000);
  }

  @Test
  void aClassTheTenantMayNotUseIsClampedToItsDefaultAndBatchIsAlwaysAllowed() {
    Tenant.Traffic batchOnly = new Tenant.Traffic(BATCH, Set.of(), 0, 0);
    assertThat(batchOnly.allowedClasses()).containsExactly(BATCH);
    assertThat(batchOnly.classFor(null)).isEqualTo(BATCH);
    assertThat(batchOnly.classFor(INTERACTIVE)).isEqualTo(BATCH);
    assertThat(batchOnly.classFor(BATCH)).isEqualTo(BATCH);

    Tenant.Traffic batchByDefault = new Tenant.Traffic(BATCH, Set.of(INTERACTIVE), 0, 0);
    assertThat(batchByDefault.classFor(null)).isEqualTo(BATCH);
    assertThat(batchByDefault.classFor(INTERACTIVE)).isEqualTo(INTERACTIVE);

    Tenant.Traffic interactive = new Tenant.Traffic(INTERACTIVE, Set.of(INTERACTIVE), 0, 0);
    assertThat(interactive.allowedClasses()).containsExactly(INTERACTIVE, BATCH);
    assertThat(interactive.classFor(BATCH)).isEqualTo(BATCH);
  }

  @Test
  void prioritiesAreBoundedAndMaxPriorityIsAtLeastPriority() {
    assertThatThrownBy(() -> new Tenant.Traffic(INTERACTIVE, Set.of(), 3, 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxPriority 2 is below priority 3");
    assertThatThrownBy(() -> new Tenant.Traffic(INTERACTIVE, Set.of(), -1001, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Tenant.Traffic(INTERACTIVE, Set.of(), 0, 1001))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new Tenant.Traffic(INTERACTIVE, Set.of(BATCH), 0, 0)).isEqualTo(Tenant.Traffic.DEFAULT);
  }
}
