import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.RoutingMode;

/**
 * What the Java test programs share: the member's address (loopback only), a watchdog that
 * ends a run that hangs, and a client config for that address.
 */
final class Harness {
    private Harness() {
    }

    /** The address from the arguments or FERROGRID_ADDRESS; exits 2 when it is missing or not loopback. */
    static String address(String[] args, String program) {
        String address = args.length > 0 ? args[0] : System.getenv("FERROGRID_ADDRESS");
        if (address == null || address.lastIndexOf(':') < 0) {
            System.err.println("usage: java " + program + " 127.0.0.1:PORT");
            System.exit(2);
        }
        String host = address.substring(0, address.lastIndexOf(':'));
        if (!(host.startsWith("127.") || host.equals("localhost"))) {
            System.err.println("refusing non-loopback address " + address);
            System.exit(2);
        }
        return address;
    }

    /** Halts the JVM with exit code 1 when the run takes longer than `millis`. */
    static void watchdog(String label, long millis) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println(label + ": FAILED: timed out after " + millis / 1000 + " s");
            Runtime.getRuntime().halt(1);
        }, label + "-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /**
     * A client of `address` in the cluster `clusterName`, without logging; a unisocket client
     * (one member, which forwards) with -Dharness.unisocket=true.
     */
    static ClientConfig clientConfig(String address, String clusterName) {
        ClientConfig cfg = new ClientConfig();
        cfg.setClusterName(clusterName);
        cfg.getNetworkConfig().addAddress(address);
        cfg.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(30_000);
        cfg.setProperty("hazelcast.logging.type", "none");
        if (Boolean.getBoolean("harness.unisocket")) {
            cfg.getNetworkConfig().getClusterRoutingConfig().setRoutingMode(RoutingMode.SINGLE_MEMBER);
        }
        return cfg;
    }
}
