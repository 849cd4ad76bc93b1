import StepSignConfig

extension CommonPasswords {
    /// The list compiled into stepsign (Django's common passwords), built on first use.
    public static var builtIn: CommonPasswords { builtInList }

    private static let builtInList = CommonPasswords(parsing: builtInListText)
}
