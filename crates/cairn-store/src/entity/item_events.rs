use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "item_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub item_id: String,
    pub kind: String,
    pub at: String,
    pub state: String,
    pub reason: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
