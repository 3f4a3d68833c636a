use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "note_versions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub note_id: String,
    pub version: i64,
    pub sha256: String,
    pub content: Option<String>,
    pub author: String,
    pub at: String,
    pub redacted_at: Option<String>,
    pub redacted_by: Option<String>,
    pub action: String,
    pub path: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
