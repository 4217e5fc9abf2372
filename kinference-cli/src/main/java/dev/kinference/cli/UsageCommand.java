package dev.kinference.cli;

import dev.kinference.gateway.UsageReports;
import dev.kinference.policy.accounting.UsageQuery;
import dev.kinference.policy.accounting.UsageTotal;
import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.StateStoreUnavailableException;
import dev.kinference.policy.limits.StateStores;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kinference usage}: what each tenant used and spent, from the shared state store. */
@Command(
    name = "usage",
    mixinStandardHelpOptions = true,
    description = {
        "Prints each tenant's usage (requests, input, cached and output tokens, cost) over a recent span, as every "
            + "gateway replica recorded it in the shared state store. The span starts at the beginning of the hour "
            + "(spans up to 2 days), day (up to 400 days) or month that --since reaches into.",
        ""})
public final class UsageCommand implements Callable<Integer> {

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before call()
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--state-store", paramLabel = "URI", defaultValue = "${env:KINFERENCE_STATE_STORE}",
      description = "The gateways' state store, redis://HOST:PORT[/DB] (env KINFERENCE_STATE_STORE; password in the "
          + "URI or KINFERENCE_STATE_STORE_PASSWORD).")
  @Nullable String stateStore;

  @Option(names = "--tenant", paramLabel = "TENANT", description = "One tenant (default: every tenant).")
  @Nullable String tenant;

  @Option(names = "--model", paramLabel = "MODEL", description = "One public model name (default: all).")
  @Nullable String model;

  @Option(names = "--since", paramLabel = "DURATION", defaultValue = "24h",
      description = "How far back: 90m, 24h, 30d (default: ${DEFAULT-VALUE}).")
  String since = "24h";

  @Option(names = "--by", paramLabel = "PERIOD",
      description = "One row per tenant and hour, day or month instead of one per tenant.")
  @Nullable String by;

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
      description = "table or json (default: ${DEFAULT-VALUE}).")
  String format = "table";

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    String uri = stateStore;
    if (uri == null || uri.isBlank()) {
      err.println("kinference usage: give --state-store redis://HOST:PORT (or set KINFERENCE_STATE_STORE)");
      return 2;
    }
    if (!format.equals("table") && !format.equals("json")) {
      err.println("kinference usage: --format must be table or json, not " + format);
      return 2;
    }
    Duration span = ServeCommand.duration(since, "--since");
    CalendarPeriod granularity;
    if (by != null) {
      granularity = switch (by) {
        case "hour" -> CalendarPeriod.HOUR;
        case "day" -> CalendarPeriod.DAY;
        case "month" -> CalendarPeriod.MONTH;
        default -> null;
      };
      if (granularity == null) {
        err.println("kinference usage: --by must be hour, day or month, not " + by);
        return 2;
      }
    } else {
      granularity = span.compareTo(Duration.ofDays(2)) <= 0 ? CalendarPeriod.HOUR
          : span.compareTo(Duration.ofDays(400)) <= 0 ? CalendarPeriod.DAY : CalendarPeriod.MONTH;
    }
    Instant now = Instant.now();
    List<UsageTotal> totals;
    try (RateLimitStore store = StateStores.open(uri, System.getenv("KINFERENCE_STATE_STORE_PASSWORD"),
        Duration.ofSeconds(5))) {
      if (!store.shared()) {
        err.println("kinference usage: '" + uri + "' is a process's memory; give the gateways' shared store");
        return 2;
      }
      totals = store.usage(new UsageQuery(tenant, model, now.minus(span), now.plusMillis(1), granularity));
    } catch (IllegalArgumentException e) {
      err.println("kinference usage: " + e.getMessage());
      return 2;
    } catch (StateStoreUnavailableException e) {
      err.println("kinference usage: the state store cannot be read: " + e.getMessage());
      return 1;
    }
    List<UsageTotal> rows = by == null ? UsageReports.perTenant(totals) : totals;
    out.print(format.equals("json") ? UsageReports.json(rows) + "\n" : UsageReports.table(rows));
    out.flush();
    return 0;
  }
}
