package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, "the checker refuses what would leak, or refuse everything": one regression test per configuration that
 * passed {@code kinference check} silently (or with a wrong message), each asserting the line the checker prints.
 */
class Issue21CheckerTest {

  private static final String POOL = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: small}
      spec:
        model: small-model
        endpoints: [{url: "http://10.0.0.1:8000"}]
      ---
      """;

  private static final String CLOUD = """
      apiVersion: kinference.dev/v1alpha1
      kind: ExternalProvider
      metadata: {name: openai}
      spec:
        api: openai
        baseUrl: https://api.openai.com/v1
        apiKey: {env: OPENAI_API_KEY}
        models: [{name: gpt-4o}]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: cloud}
      spec:
        targets: [{provider: openai, model: gpt-4o}]
      ---
      """;

  private static List<String> report(String yaml) {
    return PolicyLoader.load(yaml, "t.yaml").report().lines().toList();
  }

  @Test
  void personalDataRoutedToAnAliasWithOnlyExternalTargetsIsAnError() {
    List<String> r = report(POOL + CLOUD + """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          rules:
            - name: pii-to-cloud
              match: {personalData: true}
              action:
                route: {alias: cloud}
        """);
    assertThat(r).containsExactly("t.yaml:31:24: error: spec.rules[0].action.route.alias: rule p/pii-to-cloud routes "
        + "personal data to alias cloud, whose every target is an external provider: it would not leak, because "
        + "personal data never leaves local pools, but the gateway would refuse every request this rule matches "
        + "(403); route it to a pool or to an alias with a pool target");
  }

  @Test
  void personalDataKindsRoutedToAnAliasWithOnlyExternalTargetsIsAnError() {
    List<String> r = report(POOL + CLOUD + """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          rules:
            - name: emails-to-cloud
              match: {personalDataKinds: [email]}
              action: {route: {alias: cloud}}
        """);
    assertThat(r).singleElement().asString().startsWith("t.yaml:30:31: error: spec.rules[0].action.route.alias: "
        + "rule p/emails-to-cloud routes personal data to alias cloud");
  }

  @Test
  void aCatchAllRequireLocalFollowedByARouteThatCanOnlyGoExternalIsAnError() {
    List<String> r = report(POOL + CLOUD + """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          rules:
            - name: everything-local
              action: {requireLocal: true}
            - name: big-to-cloud
              match: {models: [small-model], promptTokens: {min: 4000}}
              action: {route: {alias: cloud}}
        """);
    assertThat(r).containsExactly(
        "t.yaml:21:12: warning: spec.targets: every request for model 'cloud' would be refused: rule "
            + "p/everything-local (t.yaml:28) requires local hardware for every request, and every target of alias "
            + "cloud is an external provider",
        "t.yaml:32:31: error: spec.rules[1].action.route.alias: every request rule p/big-to-cloud routes to alias "
            + "cloud would be refused: rule p/everything-local (t.yaml:28) requires local hardware for all of them, "
            + "and every target of cloud is an external provider; route them to a pool, or narrow rule "
            + "p/everything-local's match");
  }

  @Test
  void aProviderWithNoModelsOrAZeroTimeoutIsAnError() {
    List<String> r = report("""
        apiVersion: kinference.dev/v1alpha1
        kind: ExternalProvider
        metadata: {name: openai}
        spec:
          api: openai
          baseUrl: https://api.openai.com/v1
          apiKey: {env: OPENAI_API_KEY}
          models: []
          timeouts: {connect: 0s, request: 10m}
        """);
    assertThat(r).containsExactly(
        "t.yaml:8:11: error: spec.models: no models: the provider could serve nothing; list the models it offers, "
            + "such as [{name: gpt-4o-mini}], or remove the provider",
        "t.yaml:9:23: error: spec.timeouts.connect: a timeout of 0 would fail every request to this provider; give "
            + "a positive duration such as 30s, or remove it for the default");
  }

  @Test
  void aCurrencyMustBeAnIso4217CodeAndABudgetsPricesAreInItsCurrency() {
    List<String> r = report(POOL + """
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: a}
        spec:
          header: {name: x-tenant, value: a}
          models: ["*"]
          budget:
            period: month
            limit: 100
            currency: dollars
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: b}
        spec:
          header: {name: x-tenant, value: b}
          models: ["*"]
          budget:
            period: month
            limit: 100
            currency: eur
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: c}
        spec:
          header: {name: x-tenant, value: c}
          models: ["*"]
          budget:
            period: month
            limit: 100
            currency: EUR
            prices:
              small-model: {input: 0.1, output: 0.2, currency: EUR}
              "*": {input: 1, output: 2, currency: USD}
        """);
    assertThat(r).containsExactly(
        "t.yaml:17:15: error: spec.budget.currency: 'dollars' is not an ISO 4217 currency code; write a code such "
            + "as USD, EUR or GBP",
        "t.yaml:28:15: error: spec.budget.currency: 'eur' is not an ISO 4217 currency code (did you mean 'EUR'?); "
            + "write a code such as USD, EUR or GBP",
        "t.yaml:42:44: error: spec.budget.prices.*.currency: this price is in USD but the budget is in EUR: a "
            + "budget's prices are in one currency, its own; convert the price or set the budget's currency");
  }

  @Test
  void aBudgetInAnotherCurrencyMustPriceWhatItWouldTakeFromPoolPrices() {
    String tenant = """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: small}
        spec:
          model: small-model
          endpoints: [{url: "http://10.0.0.1:8000"}]
          price: {input: 0.05, output: 0.20}
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: eu}
        spec:
          header: {name: x-tenant, value: eu}
          models: ["*"]
          budget:
            period: month
            limit: 100
            currency: EUR
        """;
    assertThat(report(tenant)).containsExactly("t.yaml:18:15: error: spec.budget.currency: the budget is in EUR but "
        + "has no price for small-model, which would be charged at pool or provider prices, in USD: a budget's "
        + "prices are in one currency; give spec.budget.prices for them (or \"*\") in EUR");
    assertThat(report(tenant + "    prices: {small-model: {input: 0.05, output: 0.2}}\n")).isEmpty();
  }

  @Test
  void policyFilesDeeperThanSixteenDirectoriesAreRead(@TempDir Path dir) throws IOException {
    Path deep = dir;
    for (int i = 0; i < 20; i++) {
      deep = deep.resolve("d" + i);
    }
    Files.createDirectories(deep);
    Files.writeString(dir.resolve("pool.yaml"), POOL);
    Files.writeString(deep.resolve("tenant.yaml"), """
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: deep}
        spec:
          header: {name: x-tenant, value: deep}
          models: [nonexistent]
        """);
    LoadResult r = PolicyLoader.load(dir);
    assertThat(r.report()).isEqualTo(deep.resolve("tenant.yaml") + ":6:12: error: spec.models[0]: no model "
        + "'nonexistent': neither a ModelAlias's public model nor a pool's served model; known: small-model\n");
    assertThat(r.sources()).hasSize(2);
  }

  @Test
  void aSymbolicLinkLoopIsReportedAndNotFollowed(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("pool.yaml"), POOL);
    Path sub = Files.createDirectories(dir.resolve("sub"));
    Files.createSymbolicLink(sub.resolve("loop"), dir);
    LoadResult r = PolicyLoader.load(dir);
    assertThat(r.report()).isEqualTo(sub.resolve("loop") + ": error: symbolic link loop: this directory is also "
        + "one of its own parents; not read (remove the link)\n");
    assertThat(r.sources()).containsExactly(dir.resolve("pool.yaml").toString());
  }

  @Test
  void aModelLimitUnderTheTenantsOwnDefaultMaxTokensIsNotAFalseError() {
    String tenant = POOL + """
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: small-tenant}
        spec:
          header: {name: x-tenant, value: small}
          models: [small-model]
          limits: {defaultMaxTokens: 100}
          modelLimits:
            small-model: {tokensPerMinute: 500}
        """;
    LoadResult r = PolicyLoader.load(tenant, "t.yaml");
    assertThat(r.problems()).as(r.report()).isEmpty();
    // the model's own default wins over the tenant's, and the tenant's limit holds for the model's requests too
    assertThat(report(POOL + """
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: small-tenant}
        spec:
          header: {name: x-tenant, value: small}
          models: [small-model]
          limits: {defaultMaxTokens: 100, tokensPerMinute: 1000}
          modelLimits:
            small-model: {tokensPerMinute: 500, defaultMaxTokens: 2000}
        """)).containsExactly(
        "t.yaml:14:52: error: spec.limits.tokensPerMinute: tokensPerMinute 1000 is not more than the 2000 output "
            + "tokens reserved for a request for small-model without max_tokens "
            + "(spec.modelLimits.small-model.defaultMaxTokens): such requests can never be admitted",
        "t.yaml:16:36: error: spec.modelLimits.small-model.tokensPerMinute: tokensPerMinute 500 is not more than "
            + "the 2000 output tokens reserved for a request without max_tokens "
            + "(spec.modelLimits.small-model.defaultMaxTokens): such requests can never be admitted");
  }

  @Test
  void aPriorityTooLargeForAnIntegerSaysSoWithTheRange() {
    List<String> r = report("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          rules:
            - name: urgent
              action: {setPriority: 99999999999999999999}
        """);
    assertThat(r).containsExactly("t.yaml:7:29: error: spec.rules[0].action.setPriority: out of range: "
        + "99999999999999999999 is too large; must be between -2147483648 and 2147483647");
  }

  @Test
  void aNulByteIsReportedAtItsLineAndColumn() {
    List<String> r = report("""
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePolicy
        metadata: {name: p}
        spec:
          rules: [\u0000]
        """);
    assertThat(r).containsExactly("t.yaml:5:11: error: invalid YAML: special character U+0000 (NUL) is not "
        + "allowed; remove it (only tab, line breaks and printable characters may appear)");
  }
}
