extension StepSignConfiguration {
    /// `[access]`: who may talk to the socket, by the peer's SO_PEERCRED credentials.
    ///
    /// A peer is a client if its uid is in `clientUIDs` or it is in a group of
    /// `clientGroups`; an admin likewise with `adminUIDs` and `adminGroups`. UIDs are
    /// 0 to 4294967294 (4294967295 is `(uid_t)-1`, never a real user); group names are
    /// not empty.
    public struct Access: Sendable, Equatable {
        /// `client_uids`. Default [].
        public var clientUIDs: [UInt32]
        /// `client_groups`. Default ["stepsign"].
        public var clientGroups: [String]
        /// `admin_uids`. Default [0].
        public var adminUIDs: [UInt32]
        /// `admin_groups`. Default [].
        public var adminGroups: [String]

        public init(
            clientUIDs: [UInt32] = [],
            clientGroups: [String] = ["stepsign"],
            adminUIDs: [UInt32] = [0],
            adminGroups: [String] = []
        ) {
            self.clientUIDs = clientUIDs
            self.clientGroups = clientGroups
            self.adminUIDs = adminUIDs
            self.adminGroups = adminGroups
        }
    }
}
