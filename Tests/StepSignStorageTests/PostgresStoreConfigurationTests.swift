import StepSignConfig
import StepSignPostgres
import Testing

/// `[storage.postgresql]` reaches the store through one mapping (issue 23): every field, and
/// every TLS mode as itself, so that no mode can fall back to plain TCP unseen.
@Suite struct PostgresStoreConfigurationTests {
    private func settings(_ lines: String) throws -> StepSignConfiguration.Storage.PostgreSQL {
        try StepSignConfiguration.parse("[storage]\nbackend = \"postgresql\"\n[storage.postgresql]\n" + lines,
                                        file: "test.toml").storage.postgresql
    }

    @Test(arguments: StepSignConfiguration.Storage.PostgreSQL.TLS.allCases)
    func everyTLSModeIsCarriedAsItself(_ tls: StepSignConfiguration.Storage.PostgreSQL.TLS) throws {
        let parsed = try settings("""
            host = "db.example.org"
            port = 6543
            database = "stepsign_x"
            user = "signer"
            password_file = "/etc/stepsign/db-password"
            tls = "\(tls.rawValue)"
            \(tls == .verifyFull ? "tls_ca_file = \"/etc/stepsign/ca.pem\"" : "")
            pool_size = 17
            """)
        let store = PostgresStoreConfiguration(parsed)
        #expect(store.tls == tls)
        #expect(store.host == "db.example.org" && store.port == 6543 && store.database == "stepsign_x" && store.user == "signer")
        #expect(store.passwordFile == "/etc/stepsign/db-password")
        #expect(store.tlsCAFile == (tls == .verifyFull ? "/etc/stepsign/ca.pem" : nil))
        #expect(store.poolSize == 17)
        #expect(PostgresStoreConfiguration(parsed, poolSize: 2).poolSize == 2)
    }

    @Test func emptyFilesMeanNone() throws {
        let store = PostgresStoreConfiguration(try settings("host = \"/run/postgresql\""))
        #expect(store.passwordFile == nil && store.tlsCAFile == nil && store.tls == .disable && store.usesUnixSocket)
    }
}
