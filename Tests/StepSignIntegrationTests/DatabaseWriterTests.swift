import Foundation
import StepSignClient
import StepSignCrypto
import StepSignEngine
import StepSignFormat
import StepSignPostgres
import StepSignProtocol
import StepSignStorage
import StepSignTestSupport
import Testing

/// SPEC §5.4, tried as an attacker who can write the database (the SQLite file, a restored
/// backup, a stolen PostgreSQL credential) but holds no daemon's key file and not the cluster
/// root: nothing they write makes a signature verify or a key trusted.
@Suite("What a database writer cannot do", .blocking)
struct DatabaseWriterTests {
    /// The store of `cluster`'s database, opened by the attacker's own process.
    static func attackersStore(_ cluster: Cluster) async throws -> any StepSignStore {
        if let database = cluster.database {
            let socket = try #require(PostgresServer.socketDirectory)
            return try await PostgresStore.open(PostgresStoreConfiguration(
                host: socket, database: database.name, user: PostgresServer.user, poolSize: 1),
                seal: try SealKey.clusterKey(file: TestSealKey.file, environment: [:]))
        }
        return try SQLiteStore.open(stateDirectory: cluster.a.stateDirectory,
                                    seal: try SealKey.stateKey(stateDirectory: cluster.a.stateDirectory).seal, sealUnsealed: false)
    }

    static func kids(_ daemon: DaemonHarness) throws -> Set<String> {
        let jwks = try #require(try daemon.connect().call("getPublicKeys").result?["jwks"]?["keys"]?.arrayValue)
        return Set(jwks.compactMap { $0["kid"]?.stringValue })
    }

    /// The keys `daemon` publishes as not revoked: in its JWKS without `stepsign_revoked_at`.
    static func unrevokedKids(_ daemon: DaemonHarness) throws -> Set<String> {
        let jwks = try #require(try daemon.connect().call("getPublicKeys").result?["jwks"]?["keys"]?.arrayValue)
        return Set(jwks.filter { $0["stepsign_revoked_at"] == nil }.compactMap { $0["kid"]?.stringValue })
    }

    @Test("a key row with forged entries and a forged checkpoint is not published, not trusted, and reported",
          arguments: Deployment.available)
    func insertedKeyRow(_ deployment: Deployment) async throws {
        let cluster = try deployment.start()
        try cluster.a.addUser()
        let honest = try cluster.a.connect().call("authenticateUserAndSignData", [
            "user": "alice", "payload": "honest", "reason": "r", "authLevel": 0, "authenticatorType": 0,
        ])
        try #require(honest.statusCode(of: "onAuthenticateUserAndSignData") == 100)
        let published = try Self.kids(cluster.a)

        // The attacker's key, registered as a daemon's, then a level-4 signature of alice's
        // chained onto the ledger and a checkpoint over it.
        let forger = try P256PrivateKey.generate()
        let kid = forger.publicKey.thumbprint
        let store = try await Self.attackersStore(cluster)
        try await store.addSigningKey(kid: kid, createdAt: Date(), instance: "host-evil",
                                      publicKeyPEM: forger.publicKey.spkiPEM, endorsement: nil)
        let id = try UUIDv7.generate(unixMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000))
        let claims = SignatureClaims(iss: "host-a", sub: "alice", jti: id, iat: Int64(Date().timeIntervalSince1970),
                                     payload: "Transfer 1,000,000 EUR to mallory", payloadLength: 33, reason: "approved",
                                     authLevel: 4, authenticatorType: 1, authenticatorUsed: "idv-biometric",
                                     peer: SignaturePeer(uid: 0, pid: 1, comm: "systemd"))
        let forged = try StepSignSignature.make(claims: claims, key: forger, kid: kid)
        let entries = try await store.appendLedger([LedgerAppend(
            signatureID: id, user: "alice", iat: claims.iat, kid: kid, jws: forged,
            peer: LedgerPeer(uid: 0, pid: 1, comm: "systemd"), authLevel: 4)])
        let head = try #require(entries.last)
        let checkpoint = try LedgerCheckpoint(iss: "host-a", seq: head.seq, entryHash: head.entryHash, iat: claims.iat)
            .signed(key: forger, kid: kid)
        try await store.appendCheckpoint(LedgerCheckpointRecord(seq: head.seq, entryHash: head.entryHash, kid: kid,
                                                                jws: checkpoint, createdAt: Date()))
        try await store.close()

        for daemon in cluster.daemons {
            // Not published: the JWKS a verifier fetches does not verify the forgery.
            let kids = try Self.kids(daemon)
            #expect(!kids.contains(kid), "\(kids)")
            #expect(kids.isSuperset(of: published))
            let jwks = try #require(try daemon.connect().call("getPublicKeys").result?["jwks"])
            #expect(throws: SignatureVerificationError.unknownKeyID(kid)) {
                try StepSignSignature.verify(forged, trustedKeys: try TrustedKeys(parsing: jwks.jsonText))
            }
            // Listed as untrusted, reported by the audit, logged at critical.
            let keys = try #require(try daemon.connect().call("admin.listKeys").result?["keys"]?.arrayValue)
            let row = try #require(keys.first { $0["kid"]?.stringValue == kid })
            #expect(row["trusted"]?.boolValue == false, "\(row)")
            let audit = try #require(try daemon.connect().call("admin.auditVerify").result)
            #expect(audit["ok"]?.boolValue == false, "\(audit)")
            #expect(audit["firstBadSeq"]?.int == Int(head.seq), "\(audit)")
            #expect((audit["problem"]?.stringValue)?.contains("not trusted") == true, "\(audit)")
            #expect(audit["untrustedKeys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } == [kid], "\(audit)")
            let critical = daemon.log.split(separator: "\n").filter { $0.contains("level=critical") && $0.contains(kid) }
            #expect(!critical.isEmpty, "\(daemon.log)")
        }
    }

    @Test("clearing a revoked key's column does not bring it back", arguments: Deployment.available)
    func clearedRevocation(_ deployment: Deployment) async throws {
        let cluster = try deployment.start()
        let old = try #require(try cluster.a.connect().call("status").result?["activeKid"]?.stringValue)
        let revoked = try cluster.a.connect().call("admin.revokeKey", ["kid": old])
        try #require(revoked.code == 0, "\(revoked.message)")
        #expect(try !Self.unrevokedKids(cluster.a).contains(old))

        if let database = cluster.database {
            try database.execute("UPDATE signing_keys SET revoked_at = NULL WHERE kid = '\(old)'")
        } else {
            let result = try Tools.python("""
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("UPDATE signing_keys SET revoked_at = NULL WHERE kid = ?", (sys.argv[2],))
                db.commit()
                """, cluster.a.stateDirectory + "/stepsign.sqlite", old)
            try #require(result.status == 0, "\(result.stderr)")
        }
        // The holder recorded the revocation in its keys/: it stays revoked, now and after a restart.
        #expect(try !Self.unrevokedKids(cluster.a).contains(old))
        let row = try #require(try cluster.a.connect().call("admin.listKeys").result?["keys"]?.arrayValue?
            .first { $0["kid"]?.stringValue == old })
        #expect(row["revoked"]?.boolValue == true, "\(row)")
        #expect(cluster.a.log.contains("stays revoked"), "\(cluster.a.log)")
        try cluster.restart()
        #expect(try !Self.unrevokedKids(cluster.a).contains(old))
        for daemon in cluster.daemons {
            #expect(try !Self.unrevokedKids(daemon).contains(old))
        }
    }

    @Test("a daemon that does not hold a revoked key learns the revocation from the log: a cleared column changes nothing",
          .enabled(if: PostgresServer.enabled))
    func clearedRevocationSeenByTheOtherDaemon() throws {
        let cluster = try Deployment.postgres.start()
        let old = try #require(try cluster.a.connect().call("status").result?["activeKid"]?.stringValue)
        let revoked = try cluster.a.connect().call("admin.revokeKey", ["kid": old])
        try #require(revoked.code == 0, "\(revoked.message)")
        let index = try #require(revoked.result?["revokedAt"]?.int)
        // The revocation event is signed by A's next key, which the operator endorses with the
        // root (a revoked key's endorsements count for nothing, SPEC §5.4).
        let next = try #require(revoked.result?["activeKid"]?.stringValue)
        let root = try #require(cluster.root)
        let endorsed = try root.endorse(kid: next, instance: "host-a", via: cluster.a)
        try #require(endorsed.status == 0, "\(endorsed.stderr)")
        let database = try #require(cluster.database)
        try database.execute("UPDATE signing_keys SET revoked_at = NULL, revoked_index = NULL WHERE kid = '\(old)'")

        // B, which does not hold the key, reads the keys first: the signed event decides.
        let jwks = try #require(try cluster.b.connect().call("getPublicKeys").result?["jwks"]?["keys"]?.arrayValue)
        let published = try #require(jwks.first { $0["kid"]?.stringValue == old })
        #expect(published["stepsign_revoked_at"]?.int == index, "\(published)")
        #expect(cluster.b.log.contains("holds its signed revocation"), "\(cluster.b.log)")
        // And it wrote the column back, index included, for every other reader of the database.
        let rows = try database.query("SELECT revoked_index FROM signing_keys WHERE kid = '\(old)' AND revoked_at IS NOT NULL")
        #expect(rows == ["\(index)"], "\(rows)")
    }

    @Test("two daemons without a cluster root each trust only their own keys, and say so",
          .enabled(if: PostgresServer.enabled))
    func unendorsedCluster() throws {
        guard PostgresServer.socketDirectory != nil else { throw PostgresServer.NotConfigured() }
        let database = try PostgresServer.createDatabase()
        defer { database.drop() }
        let daemons = try Cluster.startTwo(on: database, config: "", root: nil)
        let kidA = try #require(try daemons[0].connect().call("status").result?["activeKid"]?.stringValue)
        let kidB = try #require(try daemons[1].connect().call("status").result?["activeKid"]?.stringValue)
        #expect(try Self.kids(daemons[0]) == [kidA])
        #expect(try Self.kids(daemons[1]) == [kidB])
        let keys = try #require(try daemons[0].connect().call("admin.listKeys").result?["keys"]?.arrayValue)
        #expect(keys.first { $0["kid"]?.stringValue == kidB }?["trusted"]?.boolValue == false)
        #expect(daemons[0].log.contains(kidB) && daemons[0].log.contains("level=critical"), "\(daemons[0].log)")
    }
}
